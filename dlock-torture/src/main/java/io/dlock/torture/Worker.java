package io.dlock.torture;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * acquisition with this owner id, shared with a worker in another process).
 */
public final class Worker {
  private Worker() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    Map<String, String> props = new HashMap<>();
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
    String id = a.get("id");
    List<String> locks = List.of(a.get("locks").split(","));
    Duration lease = Duration.ofMillis(Long.parseLong(a.get("lease-ms")));
    Duration wait = Duration.ofMillis(Long.parseLong(a.get("wait-ms")));
    int holdMin = Integer.parseInt(a.get("hold-min-ms"));
    int holdMax = Integer.parseInt(a.get("hold-max-ms"));
    int longHoldPercent = Integer.parseInt(a.getOrDefault("long-hold-percent", "0"));
    int longHold = Integer.parseInt(a.getOrDefault("long-hold-ms", "0"));
    long offset =
        Duration.ofMillis(Long.parseLong(a.getOrDefault("clock-offset-ms", "0"))).toNanos();

    EventLog history = new EventLog(Path.of(a.get("history")), id);
    history.append(Event.Kind.START, "-", 0, "pid " + ProcessHandle.current().pid());
    Thread main = Thread.currentThread();
    Thread stdinWatcher =
        new Thread(
            () -> {
              awaitEndOfInput();
              main.interrupt(); // end the run: a waiting acquire or the work gives up at once
            },
            "stdin-watcher");
    stdinWatcher.setDaemon(true);
    stdinWatcher.start();

    LockClientOptions options =
        LockClientOptions.defaults()
            .withOperationTimeout(Duration.ofSeconds(5))
            .withClock(() -> System.nanoTime() + offset);
    LockOptions lockOptions = LockOptions.defaults().withRenewedLease(lease);
    String ownerId = a.get("owner-id");
    if (ownerId != null) {
      lockOptions = lockOptions.withOwnerId(ownerId);
    }
    String grantDetail = ownerId == null ? "" : "owner " + ownerId + " ";
    long holds = 0;
    try (LockClient client = LockClients.connect(a.get("uri"), props, options);
        RegisterClient registers = new RegisterClient(Integer.parseInt(a.get("registers")), id)) {
      while (!Thread.currentThread().isInterrupted()) {
        String name = locks.get(ThreadLocalRandom.current().nextInt(locks.size()));
        Lease held;
        history.append(Event.Kind.ACQUIRING, name, 0, "");
        try {
          held = client.lock(name, lockOptions).acquire(wait);
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
          break;
        }
        long token = held.fencingToken();
        // Each hold is numbered, and its loss signal names the number: with an owner id, the next
        // hold of the same worker can re-enter the same grant (same token) before a late signal
        // of the previous hold's loss arrives, and must not be taken for lost.
        long holdNumber = ++holds;
        history.append(Event.Kind.GRANT, name, token, grantDetail + "#" + holdNumber);
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
        try {
          if (!held.isValid()) {
            history.append(Event.Kind.INVALID, name, token, "before the critical section");
          } else {
            int hold =
                ThreadLocalRandom.current().nextInt(100) < longHoldPercent
                    ? longHold
                    : holdMin + ThreadLocalRandom.current().nextInt(holdMax - holdMin + 1);
            criticalSection(registers, name, token, hold, told, history);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // the run ends; release below, then leave the loop
        } finally {
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
      }
    }
    history.close();
    System.exit(0);
  }

  /**
   * Read both registers, work, write both back plus one, unless told of the loss meanwhile.
   * Deliberately no check of the lease's own clock between the read and the write: a pause can
   * always fall between a check and the write it guards, so the check would only narrow the window
   * that the fencing token has to close. The loss signal is heeded, as an application should.
   */
  private static void criticalSection(
      RegisterClient registers,
      String name,
      long token,
      int holdMillis,
      AtomicBoolean told,
      EventLog history)
      throws InterruptedException {
    long unfenced = registers.unfencedRead(name);
    long fenced = registers.fencedRead(name, token);
    Thread.sleep(holdMillis); // the work
    if (told.get()) {
      history.append(Event.Kind.INVALID, name, token, "told of the loss: writes skipped");
      return;
    }
    registers.unfencedWrite(name, token, unfenced, unfenced + 1);
    if (fenced >= 0) {
      registers.fencedWrite(name, token, fenced, fenced + 1);
    }
  }

  private static void awaitEndOfInput() {
    InputStream in = System.in;
    byte[] buffer = new byte[64];
    try {
      while (in.read(buffer) >= 0) {
        // the coordinator writes nothing; end of input is the signal
      }
    } catch (IOException e) {
      // treated as end of input
    }
  }

  static List<String> args(Map<String, String> values, Map<String, String> props) {
    List<String> out = new ArrayList<>();
    values.forEach((k, v) -> out.add("--" + k + "=" + v));
    props.forEach((k, v) -> out.add("--prop=" + k + "=" + v));
    return out;
  }
}
