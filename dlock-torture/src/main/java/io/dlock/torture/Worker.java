package io.dlock.torture;

import io.dlock.BackendUnavailableException;
import io.dlock.HeldLeaseInfo;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A worker process: contends for a random lock of a small set, and inside it does a read, a pause
 * and a write on both registers, as a holder that checks nothing after it was granted would. It
 * runs until its standard input closes (the coordinator's way of ending a run) or it is killed.
 *
 * <p>Arguments, each {@code --name=value}: {@code id}, {@code uri}, {@code prop} (repeatable,
 * {@code key=value}), {@code locks} (comma-separated), {@code lease-ms}, {@code wait-ms}, {@code
 * hold-min-ms}, {@code hold-max-ms}, {@code long-hold-percent} and {@code long-hold-ms} (that share
 * of critical sections lasts that long instead), {@code registers} (the register server's port),
 * {@code history} (the file to append to), {@code clock-offset-ms} (added to the monotonic clock
 * the lock client sees; the history keeps the machine's own), {@code owner-id} (optional: every
 * acquisition with this owner id, shared with a worker in another process), {@code async-cancel}
 * ({@code leak}: the negative control of {@link AsyncAcquirer}), {@code abandon-at-close-ms} (the
 * negative control of {@link ClientCloser}).
 *
 * <p>A share of the acquisitions go through {@code acquireAsync} and are cancelled at random
 * ({@link AsyncAcquirer}). A {@code close} line on standard input closes the client at the next
 * hold ({@link ClientCloser}); the end of input ends the run.
 */
public final class Worker {
  /** Every worker client's operation timeout: the bound of each backend call. */
  static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);

  private Worker() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    Map<String, String> a = parse(args, props);
    String id = a.get("id");
    List<String> locks = List.of(a.get("locks").split(","));
    Duration lease = Duration.ofMillis(Long.parseLong(a.get("lease-ms")));
    Duration wait = Duration.ofMillis(Long.parseLong(a.get("wait-ms")));
    int holdMin = Integer.parseInt(a.get("hold-min-ms"));
    int holdMax = Integer.parseInt(a.get("hold-max-ms"));
    int longHoldPercent = Integer.parseInt(a.getOrDefault("long-hold-percent", "0"));
    int longHold = Integer.parseInt(a.getOrDefault("long-hold-ms", "0"));
    Path historyFile = Path.of(a.get("history"));
    EventLog history = new EventLog(historyFile, id);
    history.append(Event.Kind.START, "-", 0, "pid " + ProcessHandle.current().pid());

    LockClientOptions options = clientOptions(a);
    LockOptions lockOptions = LockOptions.defaults().withRenewedLease(lease);
    String ownerId = a.get("owner-id");
    if (ownerId != null) {
      lockOptions = lockOptions.withOwnerId(ownerId);
    }
    String grantDetail = ownerId == null ? "" : "owner " + ownerId + " ";
    Supplier<LockClient> connect = () -> LockClients.connect(a.get("uri"), props, options);
    AsyncAcquirer async =
        new AsyncAcquirer(
            history, "leak".equals(a.get("async-cancel")) ? locks.get(0) : null, holdMax);
    long holds = 0;
    LockClient client = connect.get();
    try (RegisterClient registers = new RegisterClient(Integer.parseInt(a.get("registers")), id)) {
      CloseRequests closeRequests = new CloseRequests();
      ClientCloser closer =
          new ClientCloser(
              id,
              historyFile,
              history,
              registers,
              connect,
              LockOptions.defaults().withRenewedLease(lease),
              wait,
              Duration.ofMillis(Long.parseLong(a.getOrDefault("abandon-at-close-ms", "0"))),
              lease.dividedBy(20));
      watchInput(Thread.currentThread(), closeRequests);
      while (!Thread.currentThread().isInterrupted()) {
        String name = locks.get(ThreadLocalRandom.current().nextInt(locks.size()));
        Lease held;
        boolean viaAsync = async.chooses(name);
        try {
          if (viaAsync) {
            held = async.acquire(client.lock(name, lockOptions), wait);
            if (held == null) {
              continue;
            }
          } else {
            history.append(Event.Kind.ACQUIRING, name, 0, "");
            held = client.lock(name, lockOptions).acquire(wait);
          }
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
        } catch (LockInterruptedException | InterruptedException e) {
          if (!viaAsync) {
            history.append(Event.Kind.NO_GRANT, name, 0, "interrupted: the run ends");
          }
          break;
        }
        long token = held.fencingToken();
        // Each hold is numbered, and its loss signal names the number: with an owner id, the next
        // hold of the same worker can re-enter the same grant (same token) before a late signal
        // of the previous hold's loss arrives, and must not be taken for lost.
        long holdNumber = ++holds;
        history.append(
            Event.Kind.GRANT,
            name,
            token,
            grantDetail + "#" + holdNumber + (viaAsync ? " async " + async.lastId() : ""));
        AtomicBoolean told = new AtomicBoolean();
        held.onLost(
            event -> {
              told.set(true);
              history.append(
                  Event.Kind.LOST,
                  name,
                  token,
                  "#" + holdNumber + " " + event.reason() + " " + event.detail());
            });
        boolean closing = false;
        try {
          if (!held.isValid()) {
            history.append(Event.Kind.INVALID, name, token, "before the critical section");
          } else {
            int hold =
                ThreadLocalRandom.current().nextInt(100) < longHoldPercent
                    ? longHold
                    : holdMin + ThreadLocalRandom.current().nextInt(holdMax - holdMin + 1);
            closing =
                !criticalSection(registers, closeRequests, name, token, hold, told::get, history);
            if (closing) {
              client = closer.closeWhileHolding(client, name, held);
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // the run ends; release below, then leave the loop
        } finally {
          if (!closing) {
            release(history, name, held);
          }
        }
      }
      recordWhatIsStillHeld(client, history);
    } finally {
      client.close();
    }
    history.close();
    System.exit(0);
  }

  /**
   * A worker's arguments, each {@code --name=value}; the repeatable {@code --prop=key=value} go to
   * {@code props}.
   */
  static Map<String, String> parse(String[] args, Map<String, String> props) {
    Map<String, String> a = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (!arg.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException("expected --name=value, got " + arg);
      }
      String key = arg.substring(2, eq);
      String value = arg.substring(eq + 1);
      if (key.equals("prop")) {
        int peq = value.indexOf('=');
        props.put(value.substring(0, peq), value.substring(peq + 1));
      } else {
        a.put(key, value);
      }
    }
    return a;
  }

  /**
   * Every worker client's options: the operation timeout, and the monotonic clock it sees offset by
   * {@code clock-offset-ms} (the history keeps the machine's own).
   */
  static LockClientOptions clientOptions(Map<String, String> a) {
    long offset =
        Duration.ofMillis(Long.parseLong(a.getOrDefault("clock-offset-ms", "0"))).toNanos();
    return LockClientOptions.defaults()
        .withOperationTimeout(OPERATION_TIMEOUT)
        .withClock(() -> System.nanoTime() + offset);
  }

  /** Releases a hold, even when the run ends, and records the answer. */
  private static void release(EventLog history, String name, Lease held) {
    long token = held.fencingToken();
    history.append(Event.Kind.RELEASING, name, token, "");
    String result;
    boolean ending = Thread.interrupted(); // release even when the run ends
    try {
      result = Boolean.toString(held.release());
    } catch (RuntimeException e) {
      result = "error " + e;
    }
    if (ending) {
      Thread.currentThread().interrupt();
    }
    history.append(Event.Kind.RELEASED, name, token, result);
  }

  /**
   * At the worker's end, every hold of its own released: whatever the client still lists is held by
   * nobody's account (a grant of a cancelled acquisition not given back, a lease dropped). An undo
   * may still be on its way: it gets one operation timeout, unless the client renews the lease
   * meanwhile (its remaining time grows), which no undo does: that is proof enough.
   */
  static void recordWhatIsStillHeld(LockClient client, EventLog history) {
    Thread.interrupted(); // the run's end interrupted this thread; the check below waits
    long deadline = System.nanoTime() + OPERATION_TIMEOUT.toNanos();
    Map<String, Duration> remaining = new HashMap<>();
    Set<String> renewed = new HashSet<>();
    List<HeldLeaseInfo> left = client.heldLeases();
    while (!renewed.containsAll(left.stream().map(Worker::leaseKey).toList())
        && System.nanoTime() < deadline) {
      for (HeldLeaseInfo info : left) {
        String key = leaseKey(info);
        Duration before = remaining.put(key, info.remaining());
        if (before != null && info.remaining().compareTo(before) > 0) {
          renewed.add(key);
        }
      }
      try {
        Thread.sleep(20); // polling the client's own list: it offers no wait for an empty list
      } catch (InterruptedException e) {
        break;
      }
      left = client.heldLeases();
    }
    for (HeldLeaseInfo info : left) {
      history.append(
          Event.Kind.HELD_AT_END,
          info.lockName(),
          info.fencingToken(),
          (renewed.contains(leaseKey(info)) ? "renewed, " : "")
              + "state "
              + info.state()
              + ", held since "
              + info.heldSince());
    }
  }

  private static String leaseKey(HeldLeaseInfo info) {
    return info.lockName() + " " + info.fencingToken();
  }

  /**
   * Read both registers, work, write both back plus one, unless told of the loss meanwhile. Returns
   * false, with the writes skipped, if the coordinator asked for the client's close meanwhile. A
   * leader's round of work in an election run is the same, its epoch the token. Deliberately no
   * check of the lease's own clock between the read and the write: a pause can always fall between
   * a check and the write it guards, so the check would only narrow the window that the fencing
   * token has to close. The loss signal is heeded, as an application should.
   */
  static boolean criticalSection(
      RegisterClient registers,
      CloseRequests closeRequests,
      String name,
      long token,
      int holdMillis,
      BooleanSupplier told,
      EventLog history)
      throws InterruptedException {
    long unfenced = registers.unfencedRead(name);
    long fenced = registers.fencedRead(name, token);
    if (closeRequests.await(holdMillis)) { // the work, unless the client is to close meanwhile
      return false; // the client closes under this hold: its writes are skipped
    }
    if (told.getAsBoolean()) {
      history.append(Event.Kind.INVALID, name, token, "told of the loss: writes skipped");
      return true;
    }
    registers.unfencedWrite(name, token, unfenced, unfenced + 1);
    if (fenced >= 0) {
      registers.fencedWrite(name, token, fenced, fenced + 1);
    }
    return true;
  }

  /**
   * Reads the coordinator's lines ({@code close}: close the client at the next hold; {@code
   * never-mind}: a close asked for and not done yet is not wanted any more) until the end of input,
   * the coordinator's way of ending the run: then interrupts {@code main}, so that a waiting
   * acquire or the work gives up at once.
   */
  static void watchInput(Thread main, CloseRequests closeRequests) {
    Thread watcher =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII))) {
                String line;
                while ((line = in.readLine()) != null) {
                  if (line.equals("close")) {
                    closeRequests.request();
                  } else if (line.equals("never-mind")) {
                    closeRequests.withdraw();
                  }
                }
              } catch (IOException e) {
                // treated as end of input
              }
              main.interrupt();
            },
            "stdin-watcher");
    watcher.setDaemon(true);
    watcher.start();
  }

  static List<String> args(Map<String, String> values, Map<String, String> props) {
    List<String> out = new ArrayList<>();
    values.forEach((k, v) -> out.add("--" + k + "=" + v));
    props.forEach((k, v) -> out.add("--prop=" + k + "=" + v));
    return out;
  }
}
