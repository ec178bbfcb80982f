package io.dlock.torture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The two shared resources the workers protect with their locks, one pair per lock name, served
 * over loopback TCP by the coordinating process (never through the proxies that fault the lock
 * backend: a partitioned holder can still reach the resource, which is the dangerous case).
 *
 * <ul>
 *   <li>The <b>unfenced register</b> knows nothing of locks: a worker reads it, works, and writes
 *       back the value it read plus one. A write whose read value is no longer current is a lost
 *       update; it is applied anyway, as a plain database row or file would, and counted.
 *   <li>The <b>fenced register</b> remembers the highest fencing token it has seen on any read or
 *       write and rejects an operation that carries a lower one (Kleppmann's storage-side check). A
 *       write it accepts although the value moved since the writer's read would be a stale write
 *       accepted: the fence failed, because two grants carried tokens in the wrong order. It is
 *       applied as well, and counted, so that the checker sees it.
 * </ul>
 *
 * <p>Holders of one grant (workers sharing an owner id, hence a fencing token) are one holder: a
 * write whose read is no longer current only because another holder of the same grant wrote
 * meanwhile is recorded as {@code shared}, neither a lost update nor a stale write. Writes of any
 * other grant in between still make it one.
 *
 * <p>In a semaphore run the fenced register is fenced by a {@link PermitFence} instead: several
 * permits are valid at once, so it admits a read or write whose token the backend lists as a live
 * grant and was never revoked, counts each accepted write, and judges nothing of the value read
 * (permits work side by side: a value that moved since a read is no sign of a stale write there).
 * {@link PermitFenceCriterion} judges its accepted writes against the history.
 *
 * <p>Every operation is recorded in the history with the time it was served.
 */
final class RegisterServer implements AutoCloseable {
  private final ServerSocket socket;
  private final EventLog history;
  private final ReentrantLock lock = new ReentrantLock();
  private final java.util.concurrent.locks.Condition entered = lock.newCondition();
  private final Map<String, long[]> unfenced = new HashMap<>(); // {value}
  private final Map<String, long[]> fenced = new HashMap<>(); // {value, highest token}
  private final Map<String, java.util.List<Long>> writeTokens = new HashMap<>(); // U|F name
  private final Map<String, Integer> readAt = new HashMap<>(); // U|F worker name -> writes seen
  private Map.Entry<String, String> lastEntry; // the last worker to enter, and its lock
  private final Map<String, String> closing = new HashMap<>(); // worker -> the lock it holds
  private final Map<String, Long> enteredWith = new HashMap<>(); // worker -> its last entry's token
  private long entries;
  private PermitFence permitFence; // a semaphore run's fence, or null
  private final Thread acceptor;
  private volatile boolean closed;

  RegisterServer(EventLog history) {
    this.history = history;
    try {
      this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.acceptor = new Thread(this::acceptLoop, "register-acceptor");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A semaphore run: the fenced register checks permits with {@code fence} from now on. */
  void fencePermits(PermitFence fence) {
    lock.lock();
    try {
      this.permitFence = fence;
    } finally {
      lock.unlock();
    }
  }

  /** The token {@code worker} last entered its critical section with, or 0 if it never did. */
  long enteredWith(String worker) {
    lock.lock();
    try {
      return enteredWith.getOrDefault(worker, 0L);
    } finally {
      lock.unlock();
    }
  }

  int port() {
    return socket.getLocalPort();
  }

  /**
   * Waits for the next worker of {@code among} to enter its critical section (its read of the
   * fenced register is accepted) and returns it with its lock, or empty if none does within {@code
   * timeout}. A fault aimed at that worker then lands at the start of its work, while it holds.
   */
  Optional<Map.Entry<String, String>> awaitEntry(List<String> among, java.time.Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      long seen = entries;
      while (true) {
        if (entries != seen) {
          seen = entries;
          if (among.contains(lastEntry.getKey())) {
            return Optional.of(lastEntry);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return Optional.empty();
        }
        entered.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until {@code worker} says it closes its client ({@link RegisterClient#closing}) and
   * returns the lock it holds, or empty if it does not within {@code timeout}. Not a register
   * operation: the rendezvous of the client-close fault, on the path the faults never touch.
   */
  Optional<String> awaitClosing(String worker, java.time.Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (!closing.containsKey(worker)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return Optional.empty();
        }
        entered.awaitNanos(left);
      }
      return Optional.of(closing.remove(worker));
    } finally {
      lock.unlock();
    }
  }

  /** Forgets a close {@code worker} announced that nobody waited for. */
  void forgetClosing(String worker) {
    lock.lock();
    try {
      closing.remove(worker);
    } finally {
      lock.unlock();
    }
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = socket.accept();
        Thread t = new Thread(() -> serve(client), "register-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        if (!closed) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }

  private void serve(Socket client) {
    try (client;
        BufferedReader in =
            new BufferedReader(
                new InputStreamReader(client.getInputStream(), StandardCharsets.US_ASCII));
        OutputStream out = client.getOutputStream()) {
      client.setTcpNoDelay(true);
      String line;
      while ((line = in.readLine()) != null) {
        out.write((handle(line.split(" ")) + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
    } catch (IOException e) {
      // the worker died or the run ended; its history says which
    }
  }

  String handle(String[] request) {
    String op = request[0];
    String worker = request[1];
    String name = request[2];
    PermitFence fence;
    lock.lock();
    try {
      fence = permitFence;
    } finally {
      lock.unlock();
    }
    if (fence != null && (op.equals("FREAD") || op.equals("FWRITE"))) {
      // Asks the backend: outside the register's lock, which other workers' operations need.
      return permitOperation(op, worker, name, Long.parseLong(request[3]), fence);
    }
    lock.lock();
    try {
      switch (op) {
        case "UREAD" -> {
          long value = unfenced.computeIfAbsent(name, k -> new long[1])[0];
          read("U", worker, name);
          history.append(Event.Kind.UREAD, name, 0, worker + " ok " + value);
          return Long.toString(value);
        }
        case "UWRITE" -> {
          long expected = Long.parseLong(request[3]);
          long update = Long.parseLong(request[4]);
          long token = request.length > 5 ? Long.parseLong(request[5]) : 0;
          long[] cell = unfenced.computeIfAbsent(name, k -> new long[1]);
          String result =
              cell[0] == expected
                  ? "ok"
                  : sameGrant("U", worker, name, token) ? "shared" : "lost-update";
          wrote("U", name, token);
          cell[0] = update;
          history.append(Event.Kind.UWRITE, name, 0, worker + " " + result + " " + update);
          return result;
        }
        case "FREAD" -> {
          long token = Long.parseLong(request[3]);
          long[] cell = fenced.computeIfAbsent(name, k -> new long[2]);
          if (token < cell[1]) {
            history.append(Event.Kind.FREAD, name, token, worker + " rejected " + cell[1]);
            return "rejected";
          }
          cell[1] = token;
          read("F", worker, name);
          entered(worker, name, token);
          history.append(Event.Kind.FREAD, name, token, worker + " ok " + cell[0]);
          return "ok " + cell[0];
        }
        case "FWRITE" -> {
          long token = Long.parseLong(request[3]);
          long expected = Long.parseLong(request[4]);
          long update = Long.parseLong(request[5]);
          long[] cell = fenced.computeIfAbsent(name, k -> new long[2]);
          if (token < cell[1]) {
            history.append(Event.Kind.FWRITE, name, token, worker + " rejected " + cell[1]);
            return "rejected";
          }
          String result =
              cell[0] == expected ? "ok" : sameGrant("F", worker, name, token) ? "shared" : "stale";
          wrote("F", name, token);
          cell[1] = token;
          cell[0] = update;
          history.append(Event.Kind.FWRITE, name, token, worker + " " + result + " " + update);
          return result;
        }
        case "CLOSING" -> {
          closing.put(worker, name);
          entered.signalAll();
          return "ok";
        }
        default -> throw new IllegalArgumentException("unknown register operation " + op);
      }
    } finally {
      lock.unlock();
    }
  }

  /** A worker entered its critical section: a fault aimed at the next one may take it. */
  private void entered(String worker, String name, long token) {
    lastEntry = Map.entry(worker, name);
    enteredWith.put(worker, token);
    entries++;
    entered.signalAll();
  }

  /**
   * A semaphore run's fence found {@code token} of {@code semaphore} no longer listed: recorded
   * after the listing that showed it (a later time than the server's, so the evidence errs late).
   */
  void delisted(String semaphore, long token) {
    lock.lock();
    try {
      history.append(Event.Kind.FDELISTED, semaphore, token, "");
    } finally {
      lock.unlock();
    }
  }

  /** A read or write of a semaphore run's fenced register, admitted by {@code fence}. */
  private String permitOperation(
      String op, String worker, String name, long token, PermitFence fence) {
    String verdict = fence.check(worker, name, token);
    Event.Kind kind = op.equals("FREAD") ? Event.Kind.FREAD : Event.Kind.FWRITE;
    lock.lock();
    try {
      long[] cell = fenced.computeIfAbsent(name, k -> new long[2]);
      if (!verdict.equals(PermitFence.OK)) {
        history.append(kind, name, token, worker + " rejected " + verdict);
        return "rejected";
      }
      if (kind == Event.Kind.FREAD) {
        entered(worker, name, token);
      } else {
        cell[0]++;
      }
      history.append(kind, name, token, worker + " ok " + cell[0]);
      return kind == Event.Kind.FREAD ? "ok " + cell[0] : "ok";
    } finally {
      lock.unlock();
    }
  }

  private void read(String register, String worker, String name) {
    readAt.put(
        register + " " + worker + " " + name,
        writeTokens.getOrDefault(register + " " + name, java.util.List.of()).size());
  }

  private void wrote(String register, String name, long token) {
    writeTokens.computeIfAbsent(register + " " + name, k -> new java.util.ArrayList<>()).add(token);
  }

  /** Whether every write since this worker's read carried its own token: one grant's holders. */
  private boolean sameGrant(String register, String worker, String name, long token) {
    Integer seen = readAt.get(register + " " + worker + " " + name);
    java.util.List<Long> writes =
        writeTokens.getOrDefault(register + " " + name, java.util.List.of());
    if (token <= 0 || seen == null || seen >= writes.size()) {
      return false;
    }
    return writes.subList(seen, writes.size()).stream().allMatch(t -> t == token);
  }

  @Override
  public void close() {
    closed = true;
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
