package io.dlock.torture;

import io.dlock.BackendCapability;
import io.dlock.BackendUnavailableException;
import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.Permit;
import io.dlock.testkit.net.TcpProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A worker process of a semaphore run: takes permits of one semaphore ({@code
 * LockClient.semaphore(name, permits)}), one at a time mostly and two now and then, and while it
 * holds them works on the fenced register with the permit's token: an entry (a read, which the
 * register's {@link PermitFence} admits only for a permit the backend still lists), the work (a
 * tenth of a lease to half of it, or 1.5 leases for half the permits of the partition scenario),
 * then a write, unless told of the loss meanwhile. Then it releases, and asks again at once.
 *
 * <p>Its history has the shape of a lock worker's (docs/safety.md), so that the lock machinery
 * reads it: {@code ACQUIRING}, {@code GRANT} (the permit's token; detail {@code #12 count 2 of 3}),
 * {@code LOST}, {@code INVALID}, {@code RELEASING}, {@code RELEASED}; the register writes the
 * entries and writes.
 *
 * <p>Arguments, each {@code --name=value}: {@code id}, {@code uri}, {@code prop} (repeatable),
 * {@code semaphore} (its name), {@code permits} (its bound), {@code lease-ms}, {@code wait-ms},
 * {@code hold-min-ms}, {@code hold-max-ms}, {@code long-hold-percent} and {@code long-hold-ms},
 * {@code registers}, {@code history}, {@code clock-offset-ms}. The end of standard input ends the
 * run: it releases what it holds and records what its client still holds.
 */
public final class PermitWorker {
  /** Share of acquisitions that ask for two permits (never more than the bound). */
  private static final int TWO_PERMITS_PERCENT = 20;

  private PermitWorker() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    Map<String, String> a = Worker.parse(args, props);
    String id = a.get("id");
    String name = a.get("semaphore");
    int bound = Integer.parseInt(a.get("permits"));
    Duration lease = Duration.ofMillis(Long.parseLong(a.get("lease-ms")));
    Duration wait = Duration.ofMillis(Long.parseLong(a.get("wait-ms")));
    int holdMin = Integer.parseInt(a.get("hold-min-ms"));
    int holdMax = Integer.parseInt(a.get("hold-max-ms"));
    int longHoldPercent = Integer.parseInt(a.getOrDefault("long-hold-percent", "0"));
    int longHold = Integer.parseInt(a.getOrDefault("long-hold-ms", "0"));
    EventLog history = new EventLog(Path.of(a.get("history")), id);
    history.append(Event.Kind.START, "-", 0, "pid " + ProcessHandle.current().pid());
    LockClient client = LockClients.connect(a.get("uri"), props, Worker.clientOptions(a));
    LeasedSemaphore semaphore =
        client.semaphore(name, bound, LockOptions.defaults().withRenewedLease(lease));
    long grants = 0;
    ThreadLocalRandom random = ThreadLocalRandom.current();
    try (RegisterClient registers = new RegisterClient(Integer.parseInt(a.get("registers")), id)) {
      Worker.watchInput(Thread.currentThread(), new CloseRequests());
      while (!Thread.currentThread().isInterrupted()) {
        int count = bound >= 2 && random.nextInt(100) < TWO_PERMITS_PERCENT ? 2 : 1;
        String asked = "count " + count + " of " + bound;
        history.append(Event.Kind.ACQUIRING, name, 0, asked);
        Permit permit;
        try {
          permit = semaphore.acquire(count, wait);
        } catch (LockTimeoutException e) {
          history.append(Event.Kind.NO_GRANT, name, 0, "timeout");
          continue;
        } catch (BackendUnavailableException e) {
          history.append(Event.Kind.NO_GRANT, name, 0, "unavailable " + e.getMessage());
          try {
            Thread.sleep(100); // the backend is down: retry a little later, not in a tight loop
          } catch (InterruptedException stop) {
            break;
          }
          continue;
        } catch (LockInterruptedException e) {
          history.append(Event.Kind.NO_GRANT, name, 0, "interrupted: the run ends");
          break;
        }
        long token = permit.fencingToken();
        long number = ++grants;
        history.append(Event.Kind.GRANT, name, token, "#" + number + " " + asked);
        AtomicBoolean told = new AtomicBoolean();
        permit.onLost(
            event -> {
              told.set(true);
              history.append(
                  Event.Kind.LOST,
                  name,
                  token,
                  "#" + number + " " + event.reason() + " " + event.detail());
            });
        try {
          if (!permit.isValid()) {
            history.append(Event.Kind.INVALID, name, token, "before the work");
          } else {
            int hold =
                random.nextInt(100) < longHoldPercent
                    ? longHold
                    : holdMin + random.nextInt(holdMax - holdMin + 1);
            work(registers, name, token, hold, told, history);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // the run ends; release below, then leave the loop
        } finally {
          release(history, name, permit);
        }
      }
      Worker.recordWhatIsStillHeld(client, history);
    } finally {
      client.close();
    }
    history.close();
    System.exit(0);
  }

  /**
   * Enters the fenced register with the permit's token, works, and writes unless told of the loss
   * meanwhile. No check of the lease's own clock before the write, as in {@link
   * Worker#criticalSection}: the fence is what must stop a permit that ended unnoticed.
   */
  private static void work(
      RegisterClient registers,
      String name,
      long token,
      int holdMillis,
      AtomicBoolean told,
      EventLog history)
      throws InterruptedException {
    long entered = registers.fencedRead(name, token);
    Thread.sleep(holdMillis); // the work itself: its length is the workload's, not a wait
    if (told.get()) {
      history.append(Event.Kind.INVALID, name, token, "told of the loss: write skipped");
      return;
    }
    if (entered >= 0) {
      registers.fencedWrite(name, token, entered, entered + 1);
    }
  }

  private static void release(EventLog history, String name, Permit permit) {
    long token = permit.fencingToken();
    history.append(Event.Kind.RELEASING, name, token, "");
    String result;
    boolean ending = Thread.interrupted(); // release even when the run ends
    try {
      result = Boolean.toString(permit.release());
    } catch (RuntimeException e) {
      result = "error " + e;
    }
    if (ending) {
      Thread.currentThread().interrupt();
    }
    history.append(Event.Kind.RELEASED, name, token, result);
  }

  /**
   * How many permits a grant's detail says it holds ({@code #12 count 2 of 3}: 2), or 1 for a
   * lock's grant, which says none.
   */
  static int count(String detail) {
    String[] words = detail.split(" ");
    for (int i = 0; i + 1 < words.length; i++) {
      if (words[i].equals("count")) {
        return Integer.parseInt(words[i + 1]);
      }
    }
    return 1;
  }

  /** The bound a grant's detail names ({@code #12 count 2 of 3}: 3), or 0 if none. */
  static int bound(String detail) {
    String[] words = detail.split(" ");
    for (int i = 0; i + 3 < words.length; i++) {
      if (words[i].equals("count") && words[i + 2].equals("of")) {
        return Integer.parseInt(words[i + 3]);
      }
    }
    return 0;
  }

  /**
   * Why {@code target}'s backend cannot run a semaphore, or null if it can: its client's
   * capabilities, asked once with a client of its own.
   */
  static String unsupportedOn(Target target) {
    // Through proxies, as the probe connects: a target's URI names the ports a client reaches, and
    // zookeeper-netns's members are reached only that way (their own ports are in namespaces).
    List<TcpProxy> proxies = target.servers().stream().map(TcpProxy::new).toList();
    try (LockClient client =
        LockClients.connect(
            target.uri(proxies.stream().map(TcpProxy::port).toList()),
            target.properties(Duration.ofSeconds(2)),
            LockClientOptions.defaults().withOperationTimeout(Worker.OPERATION_TIMEOUT))) {
      return client.capabilities().contains(BackendCapability.SEMAPHORES)
          ? null
          : "its backend has no semaphores";
    } finally {
      proxies.forEach(TcpProxy::close);
    }
  }
}
