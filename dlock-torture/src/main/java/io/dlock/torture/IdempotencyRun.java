package io.dlock.torture;

import io.dlock.idempotency.ClaimOutcome;
import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.IdempotencyStoreException;
import io.dlock.idempotency.TokenConsumption;
import io.dlock.idempotency.TokenStore;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import io.dlock.idempotency.redis.RedisIdempotency;
import io.dlock.testkit.net.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An idempotency store under lost replies, checked against a ledger. Clients (threads, each with
 * its own connection through a proxy of its own) serve requests; every token and every dedup key is
 * wanted by two requests at once, each with a request id of its own, so exactly one of them must be
 * told it consumed the token (claimed the key) and the other that it was taken. Meanwhile the
 * proxies lose the store's replies (the command ran, the connection is reset before the answer
 * arrives), and a client retries a failed call with the same request id, as docs/idempotency.md
 * asks. The ledger records each request's final answer; the check counts tokens (keys) applied
 * twice, requests refused because of their own earlier, unanswered attempt, tokens (keys) never
 * applied, and requests whose outcome the caller never learned.
 */
final class IdempotencyRun {
  private static final int CLIENTS = 4;

  /** How long a caller retries a request whose outcome it did not learn. */
  private static final Duration RETRY_FOR = Duration.ofSeconds(15);

  private final RunSettings settings;
  private final IdempotencyTarget target;

  /** One request: a token to consume or a dedup key to claim, and its own request id. */
  private record Request(String item, boolean token, String requestId) {}

  /** A client: its proxy, and the store reached through it. */
  private record Client(
      TcpProxy proxy, TokenStore tokens, DedupRecords dedup, AutoCloseable io, boolean freshIds) {}

  IdempotencyRun(RunSettings settings, IdempotencyTarget target) {
    this.settings = settings;
    this.target = target;
  }

  RunResult run() throws InterruptedException {
    List<Client> clients = new ArrayList<>();
    Client direct = connect(null);
    for (int i = 0; i < CLIENTS; i++) {
      clients.add(connect(new TcpProxy(target.servers().get(0))));
    }
    LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    Map<String, List<String>> outcomes = new ConcurrentHashMap<>(); // item -> "rid outcome"
    AtomicInteger retries = new AtomicInteger();
    AtomicInteger unresolved = new AtomicInteger();
    AtomicInteger requests = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(CLIENTS + 1);
    long start = System.nanoTime();
    long end = start + settings.duration().toNanos();
    try {
      List<Future<?>> served = new ArrayList<>();
      for (Client c : clients) {
        served.add(threads.submit(() -> serve(c, queue, outcomes, retries, unresolved, end)));
      }
      // Lose replies at random while the clients work: the fault of this scenario. A client's
      // proxy is armed again only once its last drop happened and it had 100 ms to reconnect and
      // answer a retry, else no reply would ever get through (the client library's handshake
      // included) and every request would fail for good.
      Future<?> faults =
          threads.submit(
              () -> {
                int[] awaited = new int[CLIENTS]; // the drop count that ends an armed drop
                long[] lastDrop = new long[CLIENTS];
                while (System.nanoTime() < end) {
                  int i = ThreadLocalRandom.current().nextInt(CLIENTS);
                  TcpProxy proxy = clients.get(i).proxy();
                  int dropped = proxy.droppedReplies();
                  long now = System.nanoTime();
                  if (awaited[i] != 0 && dropped >= awaited[i]) {
                    awaited[i] = 0;
                    lastDrop[i] = now;
                  }
                  if (awaited[i] == 0 && now - lastDrop[i] >= 100_000_000L) {
                    awaited[i] = dropped + 1;
                    proxy.dropNextReply(true);
                  }
                  try {
                    Thread.sleep(25); // the fault's rate, not a synchronization
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              });
      int n = 0;
      String run = Long.toString(System.nanoTime() % 1_000_000, 36);
      while (System.nanoTime() < end) {
        // Keep the clients busy: two requests for each item, a token or a dedup key in turn.
        if (queue.size() < CLIENTS * 2) {
          boolean token = n % 2 == 0;
          String item = token ? issue(direct) : "dedup-" + run + "-" + n;
          if (item == null) {
            continue;
          }
          queue.add(new Request(item, token, "req-" + run + "-" + n + "-a"));
          queue.add(new Request(item, token, "req-" + run + "-" + n + "-b"));
          requests.addAndGet(2);
          n++;
        } else {
          Thread.sleep(1); // the queue is full: the clients are behind
        }
      }
      faults.get(10, TimeUnit.SECONDS);
      for (Future<?> f : served) {
        f.get(60, TimeUnit.SECONDS);
      }
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("an idempotency client failed", e);
    } finally {
      threads.shutdownNow();
    }
    int dropped = clients.stream().mapToInt(c -> c.proxy().droppedReplies()).sum();
    for (Client c : clients) {
      close(c);
    }
    close(direct);
    // Requests still queued at the end were never served: not part of the ledger.
    int served = requests.get() - queue.size();
    for (Request r : queue) {
      outcomes.remove(r.item());
    }
    return check(outcomes, served, dropped, retries.get(), unresolved.get(), start);
  }

  private static String issue(Client direct) {
    try {
      return direct.tokens().issue(Duration.ofHours(1)).value();
    } catch (IdempotencyStoreException e) {
      return null; // the direct path is never faulted; retried by the loop
    }
  }

  /** Serves requests until the run ends and the queue is drained of what it took. */
  private static void serve(
      Client c,
      LinkedBlockingQueue<Request> queue,
      Map<String, List<String>> outcomes,
      AtomicInteger retries,
      AtomicInteger unresolved,
      long end) {
    while (System.nanoTime() < end) {
      Request r;
      try {
        r = queue.poll(10, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (r == null) {
        continue;
      }
      String outcome = null;
      long giveUp = System.nanoTime() + RETRY_FOR.toNanos();
      long backoff = 10;
      int attempt = 0;
      while (outcome == null && System.nanoTime() < giveUp) {
        attempt++;
        try {
          outcome = r.token() ? consume(c, r, attempt) : claim(c, r, attempt);
        } catch (IdempotencyStoreException e) {
          retries.incrementAndGet();
          try {
            Thread.sleep(backoff); // a retry's backoff, as a caller would
          } catch (InterruptedException stop) {
            return;
          }
          backoff = Math.min(200, backoff * 2);
        }
      }
      if (outcome == null) {
        unresolved.incrementAndGet();
        outcome = "unresolved";
      }
      outcomes
          .computeIfAbsent(r.item(), k -> java.util.Collections.synchronizedList(new ArrayList<>()))
          .add(
              r.requestId()
                  + " "
                  + outcome
                  + (attempt > 1 ? " after " + attempt + " attempts" : ""));
    }
  }

  /** The request id of an attempt: the request's own, or a new one in the negative control. */
  private static String id(Client c, Request r, int attempt) {
    return c.freshIds() ? r.requestId() + "-" + attempt : r.requestId();
  }

  private static String consume(Client c, Request r, int attempt) {
    TokenConsumption answer = c.tokens().consume(r.item(), id(c, r, attempt));
    return answer.name();
  }

  /** A claim, and for the claimant the work's completion (retried with the claim's handle). */
  private static String claim(Client c, Request r, int attempt) {
    ClaimOutcome answer = c.dedup().claim(r.item(), "fingerprint", id(c, r, attempt));
    if (answer instanceof ClaimOutcome.Claimed claimed) {
      byte[] result = r.requestId().getBytes(StandardCharsets.UTF_8);
      long giveUp = System.nanoTime() + RETRY_FOR.toNanos();
      while (true) {
        try {
          claimed.claim().complete(result);
          return "CLAIMED";
        } catch (IdempotencyStoreException e) {
          if (System.nanoTime() > giveUp) {
            return "CLAIMED-NOT-COMPLETED";
          }
          try {
            Thread.sleep(10); // a retry's backoff
          } catch (InterruptedException stop) {
            Thread.currentThread().interrupt();
            return "CLAIMED-NOT-COMPLETED";
          }
        }
      }
    }
    if (answer instanceof ClaimOutcome.Completed completed) {
      return "COMPLETED " + new String(completed.result(), StandardCharsets.UTF_8);
    }
    return answer instanceof ClaimOutcome.InProgress ? "IN_PROGRESS" : "MISMATCH";
  }

  private RunResult check(
      Map<String, List<String>> outcomes,
      int served,
      int dropped,
      int retries,
      int unresolved,
      long start) {
    int once = 0;
    int twice = 0;
    int ownEarlier = 0;
    int never = 0;
    int wrong = 0;
    List<String> examples = new ArrayList<>();
    for (List<String> answers : outcomes.values()) {
      Map<String, String> byRequest = new HashMap<>();
      for (String a : answers) {
        int space = a.indexOf(' ');
        byRequest.put(a.substring(0, space), a.substring(space + 1).replaceAll(" after .*", ""));
      }
      long applied =
          byRequest.values().stream()
              .filter(o -> o.equals("CONSUMED") || o.startsWith("CLAIMED"))
              .count();
      String claimant =
          byRequest.entrySet().stream()
              .filter(e -> e.getValue().startsWith("CLAIMED"))
              .map(Map.Entry::getKey)
              .findFirst()
              .orElse(null);
      if (applied == 1) {
        once++;
      } else if (applied > 1) {
        twice++;
      } else {
        never++;
      }
      for (Map.Entry<String, String> e : byRequest.entrySet()) {
        String o = e.getValue();
        boolean refused =
            o.equals("ALREADY_CONSUMED") || o.equals("IN_PROGRESS") || o.startsWith("COMPLETED ");
        if (refused && applied == 0) {
          ownEarlier++;
          if (examples.size() < 3) {
            examples.add(answers.toString());
          }
        }
        if (o.startsWith("COMPLETED ")
            && claimant != null
            && !o.substring("COMPLETED ".length()).equals(claimant)) {
          wrong++;
        }
        if (o.equals("EXPIRED") || o.equals("UNKNOWN") || o.equals("MISMATCH")) {
          wrong++;
        }
      }
    }
    List<String> failures = new ArrayList<>();
    if (twice > 0) {
      failures.add(twice + " token(s) or key(s) applied twice");
    }
    if (ownEarlier > 0) {
      failures.add(
          ownEarlier
              + " request(s) refused because of their own earlier attempt (e.g. "
              + String.join(", ", examples)
              + ")");
    }
    if (never > 0) {
      failures.add(never + " token(s) or key(s) never applied");
    }
    if (unresolved > 0) {
      failures.add(
          unresolved + " request(s) never answered in " + RETRY_FOR.toSeconds() + " s of retries");
    }
    if (wrong > 0) {
      failures.add(wrong + " wrong answer(s) (another's result, expired, unknown, mismatch)");
    }
    if (served < 3) {
      failures.add("only " + served + " request(s): the run proved nothing");
    }
    if (dropped == 0) {
      failures.add("no reply was dropped");
    }
    Ledger ledger =
        new Ledger(served, dropped, retries, once, twice, ownEarlier, never, unresolved, wrong);
    return RunResult.ofLedger(
        target.name(),
        settings.scenario(),
        Duration.ofNanos(System.nanoTime() - start),
        ledger,
        failures);
  }

  private Client connect(TcpProxy proxy) {
    int port = proxy == null ? target.servers().get(0).getPort() : proxy.port();
    String uri = target.uri(List.of(port));
    if (target.redis()) {
      RedisIdempotency redis = RedisIdempotency.connect(uri);
      return new Client(
          proxy, redis.tokenStore(), DedupRecords.on(redis.dedupStore()), redis, target.freshIds());
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(uri);
    JdbcIdempotency jdbc = JdbcIdempotency.on(ds, JdbcIdempotencySettings.defaults());
    if (proxy == null) {
      jdbc.createSchema();
    }
    return new Client(
        proxy, jdbc.tokenStore(), DedupRecords.on(jdbc.dedupStore()), null, target.freshIds());
  }

  private static void close(Client c) {
    try {
      if (c.io() != null) {
        c.io().close();
      }
    } catch (Exception e) {
      // closing anyway
    }
    if (c.proxy() != null) {
      c.proxy().close();
    }
  }
}
