package io.dlock.redis;

import io.dlock.BackendUnavailableException;
import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redlock: the same lock on N independent Redis masters, granted only when a majority granted it
 * within a time well below the lease.
 *
 * <ul>
 *   <li>Acquire: the one-round-trip acquire script on every master at once, each bounded by the
 *       per-node timeout. With a majority, the fencing token is the highest of their counters,
 *       written back to them (so that any later majority, which shares a master with this one,
 *       counts past it). The validity left is the lease minus the time taken minus the drift (1% of
 *       the lease + 2 ms), measured on the monotonic clock: the core applies exactly that to the
 *       lease it gives the holder. No majority, or no validity left: released on every master,
 *       including those that failed, and reported as not granted; the core retries after a random
 *       backoff within the caller's wait.
 *   <li>Renew and release: on every master; a lease is renewed only where a majority renewed it,
 *       and lost otherwise.
 * </ul>
 *
 * Masters that cannot be reached at start-up are connected later, in the background ({@link
 * RedlockMaster}). A grant that fails, or a master that answers too late, is taken back by the
 * acquire's request id ({@code undo-acquire.lua}), never by owner alone.
 */
public final class RedlockLockBackend implements LockBackend {
  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();
  private static final Logger log = LoggerFactory.getLogger(RedlockLockBackend.class);

  private final RedlockSettings settings;
  private final List<RedlockMaster> masters = new ArrayList<>();
  private final RedlockAdministration administration = new RedlockAdministration(this);
  private final ExecutorService connector;
  private final int quorum;

  /** The client's clock, from {@link #start}; the system clock until then. */
  private volatile MonotonicClock clock = MonotonicClock.SYSTEM;

  private RedlockLockBackend(RedlockSettings settings) {
    this.settings = settings;
    this.quorum = settings.quorum();
    this.connector = Executors.newCachedThreadPool(DriverThreads.daemon("dlock-redlock-connect"));
    for (String uri : settings.uris()) {
      masters.add(new RedlockMaster(uri, settings, connector));
    }
    // All masters at once, and start as soon as a majority is up: a dead master costs at most its
    // connect timeout once (when a majority is not up without it), and keeps trying in the
    // background.
    AtomicInteger connected = new AtomicInteger();
    AtomicInteger answered = new AtomicInteger();
    CompletableFuture<Void> enough = new CompletableFuture<>();
    for (RedlockMaster master : masters) {
      master
          .connectInBackground()
          .whenComplete(
              (ok, error) -> {
                if (Boolean.TRUE.equals(ok) && connected.incrementAndGet() >= quorum) {
                  enough.complete(null);
                }
                if (answered.incrementAndGet() == masters.size()) {
                  enough.complete(null);
                }
              });
    }
    enough.join();
    int up = connected.get();
    if (up < quorum) {
      close();
      throw new BackendUnavailableException(
          "Only "
              + up
              + " of "
              + masters.size()
              + " Redis masters are reachable; Redlock needs "
              + quorum);
    }
  }

  /**
   * Connects to the masters.
   *
   * @throws BackendUnavailableException if fewer than a majority can be reached
   */
  public static RedlockLockBackend connect(RedlockSettings settings) {
    return new RedlockLockBackend(settings);
  }

  @Override
  public String name() {
    return "redlock";
  }

  @Override
  public void start(BackendContext context) {
    clock = context.clock();
  }

  /**
   * No release signals: waiters retry after a random delay, as the algorithm prescribes, instead of
   * subscribing on every master.
   */
  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.empty();
  }

  RedlockSettings settings() {
    return settings;
  }

  /** How many masters make a majority. */
  int quorum() {
    return quorum;
  }

  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(administration);
  }

  /** Every master's answer: a value, or null where the master failed or was too slow. */
  private <T> CompletableFuture<List<@Nullable T>> onEveryMaster(
      Function<RedisLockBackend, CompletableFuture<T>> call) {
    return onEveryMaster(call, settings.nodeTimeout());
  }

  private <T> CompletableFuture<List<@Nullable T>> onEveryMaster(
      Function<RedisLockBackend, CompletableFuture<T>> call, Duration timeout) {
    return askEveryMaster(master -> master.call(call, timeout));
  }

  <T> CompletableFuture<List<@Nullable T>> askEveryMaster(
      Function<RedlockMaster, CompletableFuture<T>> perMaster) {
    List<CompletableFuture<@Nullable T>> answers = new ArrayList<>();
    for (RedlockMaster master : masters) {
      answers.add(perMaster.apply(master).handle((value, error) -> error == null ? value : null));
    }
    return CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0]))
        .thenApply(done -> answers.stream().map(CompletableFuture::join).toList());
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner owner, Duration lease) {
    long start = clock.nanoTime();
    // One request id on every master, so that the grant can be taken back exactly, master by
    // master, whatever each answered (or did not answer) in time.
    String request = RequestIds.next();
    return onEveryMaster(m -> m.acquire(lockName, owner, lease, request))
        .thenCompose(
            answers -> {
              List<Integer> granted = new ArrayList<>();
              long token = 0;
              int holds = 0;
              int failed = 0;
              Duration holderRemaining = null;
              for (int i = 0; i < answers.size(); i++) {
                AcquireResult answer = answers.get(i);
                if (answer instanceof AcquireResult.Granted g) {
                  granted.add(i);
                  token = Math.max(token, g.fencingToken());
                  holds = Math.max(holds, g.holdCount());
                } else if (answer instanceof AcquireResult.Held h) {
                  if (h.holderRemaining() != null
                      && (holderRemaining == null
                          || h.holderRemaining().compareTo(holderRemaining) < 0)) {
                    holderRemaining = h.holderRemaining();
                  }
                } else {
                  failed++;
                }
              }
              if (granted.size() < quorum) {
                undoEverywhere(lockName, owner, lease, start, request, answers.size());
                if (failed > masters.size() - quorum) {
                  throw new CompletionException(
                      new BackendUnavailableException(
                          "Redlock: only "
                              + (masters.size() - failed)
                              + " of "
                              + masters.size()
                              + " Redis masters answered; a grant needs "
                              + quorum));
                }
                return CompletableFuture.completedFuture(
                    (AcquireResult) new AcquireResult.Held(holderRemaining));
              }
              // A master that did not answer in time may still grant later: take that back.
              undoWhereNotGranted(lockName, owner, lease, start, request, answers);
              long combined = token;
              int finalHolds = holds;
              return agreeOnToken(lockName, owner, combined, granted)
                  .thenApply(
                      agreed -> {
                        long validityNanos =
                            lease.toNanos()
                                - (clock.nanoTime() - start)
                                - (lease.toNanos() / 100 + 2_000_000L);
                        if (agreed < quorum || validityNanos <= 0) {
                          log.debug(
                              "Redlock grant of '{}' dropped: {} of {} agreed, {} ms of validity left",
                              lockName,
                              agreed,
                              masters.size(),
                              TimeUnit.NANOSECONDS.toMillis(validityNanos));
                          undoEverywhere(lockName, owner, lease, start, request, answers.size());
                          return (AcquireResult) new AcquireResult.Held(null);
                        }
                        return new AcquireResult.Granted(combined, finalHolds);
                      });
            });
  }

  /** Writes the combined token back to the granting masters; counts those that still hold it. */
  private CompletableFuture<Integer> agreeOnToken(
      String lockName, LockOwner owner, long token, List<Integer> granted) {
    List<CompletableFuture<Boolean>> acks = new ArrayList<>();
    for (int i : granted) {
      acks.add(
          masters
              .get(i)
              .call(m -> m.raiseFence(lockName, owner, token))
              .handle((ok, error) -> error == null && ok));
    }
    return CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0]))
        .thenApply(done -> (int) acks.stream().filter(CompletableFuture::join).count());
  }

  private void undoEverywhere(
      String lockName, LockOwner owner, Duration lease, long start, String request, int count) {
    for (int i = 0; i < count; i++) {
      undoOn(masters.get(i), lockName, owner, lease, start, request);
    }
  }

  private void undoWhereNotGranted(
      String lockName,
      LockOwner owner,
      Duration lease,
      long start,
      String request,
      List<@Nullable AcquireResult> answers) {
    for (int i = 0; i < answers.size(); i++) {
      if (answers.get(i) == null) {
        undoOn(masters.get(i), lockName, owner, lease, start, request);
      }
    }
  }

  /**
   * Takes back this request's hold on one master, exactly (by request id, never another grant's
   * hold), retrying until the master answers or the lease has ended there on its own.
   */
  private void undoOn(
      RedlockMaster master,
      String lockName,
      LockOwner owner,
      Duration lease,
      long start,
      String request) {
    UnansweredAcquireUndo.start(
        lockName,
        lease,
        start,
        clock,
        closed::get,
        () -> master.call(m -> m.undoAcquire(lockName, owner, request)));
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    return onEveryMaster(m -> m.release(lockName, owner, fencingToken))
        .thenApply(
            answers -> {
              if (answers.stream().allMatch(a -> a == null)) {
                throw new CompletionException(
                    new BackendUnavailableException(
                        "Redlock: no Redis master answered the release of '" + lockName + "'"));
              }
              if (answers.contains(ReleaseResult.RELEASED)) {
                return ReleaseResult.RELEASED;
              }
              return answers.contains(ReleaseResult.STILL_HELD)
                  ? ReleaseResult.STILL_HELD
                  : ReleaseResult.NOT_HELD;
            });
  }

  /**
   * Renews on every master; a master's bound is the node timeout once per script call the batch
   * takes there ({@link RedisRenewal#renewalCalls}, {@value RedisRenewal#CHUNK} leases each), since
   * its calls run one after another, and at most the master's command timeout ({@link
   * RedlockMaster#commandTimeout}, at least 1 s). The node timeout keeps an acquisition's validity
   * arithmetic right; a renewal's validity is measured from its send by the core, so a longer bound
   * costs no safety, and one bound for the whole batch timed large batches out as a whole (issue
   * 29).
   */
  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    Duration scaled = settings.nodeTimeout().multipliedBy(RedisRenewal.renewalCalls(leases.size()));
    Duration cap = RedlockMaster.commandTimeout(settings);
    Duration bound = scaled.compareTo(cap) < 0 ? scaled : cap;
    return onEveryMaster(m -> m.renew(leases), bound)
        .thenApply(
            answers -> {
              requireQuorum(answers, "the renewal");
              Set<HeldLease> gone = new HashSet<>();
              for (HeldLease lease : leases) {
                long renewed =
                    answers.stream().filter(a -> a != null && !a.contains(lease)).count();
                if (renewed < quorum) {
                  gone.add(lease);
                }
              }
              return gone;
            });
  }

  /** Fails the call unless a quorum of masters answered it. */
  void requireQuorum(List<?> answers, String what) {
    long answered = answers.stream().filter(a -> a != null).count();
    if (answered < quorum) {
      throw new CompletionException(
          new BackendUnavailableException(
              "Redlock: only "
                  + answered
                  + " of "
                  + masters.size()
                  + " Redis masters answered "
                  + what
                  + "; it needs "
                  + quorum));
    }
  }

  /** The masters, in the order of the settings: for tests. */
  List<RedlockMaster> masters() {
    return List.copyOf(masters);
  }

  @Override
  public void close() {
    closed.set(true);
    // All masters at once: each closes within its command timeout, so the whole close does too,
    // where one after another took that times the silent masters (found by review).
    List<Thread> closing = new ArrayList<>(masters.size());
    for (RedlockMaster master : masters) {
      Thread t = new Thread(master::close, "dlock-redlock-close");
      t.setDaemon(true);
      t.start();
      closing.add(t);
    }
    for (Thread t : closing) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // the masters' closes go on; keep the flag
        break;
      }
    }
    connector.shutdownNow();
  }
}
