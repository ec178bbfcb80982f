package io.dlock.testkit.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A loopback TCP proxy between one worker and one backend server, so that a fault can hit one
 * client's network path and no other's.
 *
 * <ul>
 *   <li>{@link #refuse} closes every connection and each new one at once, until {@link #allow}.
 *   <li>{@link #dropNextReply} loses one answer of the server and resets that connection.
 *   <li>{@link #delay} holds every chunk, in both directions, for a fixed time before passing it
 *       on.
 *   <li>{@link #cut} stops all traffic, as a partition does: bytes sent during the cut are held,
 *       not delivered, and nothing is closed, so clients see silence and must rely on their
 *       timeouts. {@link #heal} ends it and resets every connection that lived through it, as a
 *       partition long enough for the peers to give up would; clients reconnect through the proxy.
 * </ul>
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final ReentrantLock gateLock = new ReentrantLock();
  private final Condition gateOpen = gateLock.newCondition();
  private volatile boolean cut;
  private volatile boolean refusing;
  private volatile long delayNanos;
  private volatile boolean closed;
  private final AtomicBoolean dropNextReply = new AtomicBoolean();
  private volatile boolean resetOnDrop = true;
  private final AtomicInteger droppedReplies = new AtomicInteger();

  public TcpProxy(InetSocketAddress target) {
    this.target = target;
    try {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread acceptor = new Thread(this::acceptLoop, "proxy-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** {@code 127.0.0.1:<port>} of the proxy, for a connect string. */
  public String address() {
    return "127.0.0.1:" + port();
  }

  /**
   * Takes the path down, as a dead server or a closed port looks: every connection is closed and
   * new ones are closed at once, until {@link #allow}. Unlike {@link #cut}, clients notice at once.
   */
  public void refuse() {
    refusing = true;
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }

  /** Ends {@link #refuse}: new connections are forwarded again. */
  public void allow() {
    refusing = false;
  }

  public void delay(long millis) {
    delayNanos = TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /**
   * Loses the server's next answer: the next bytes from the server toward a client are discarded
   * and that connection is reset (both ends), as a crash of the network path just after the server
   * acted would. The request reached the server; the client never learns its outcome.
   */
  public void dropNextReply() {
    dropNextReply(true);
  }

  /**
   * As {@link #dropNextReply()}; {@code reset} false closes the connection in order (FIN) instead
   * of resetting it, as a proxy or load balancer that gives up may.
   */
  public void dropNextReply(boolean reset) {
    resetOnDrop = reset;
    dropNextReply.set(true);
  }

  /** How many answers were thrown away so far. */
  public int droppedReplies() {
    return droppedReplies.get();
  }

  public void cut() {
    cut = true;
  }

  public void heal() {
    if (!cut) {
      return; // nothing to heal: leave healthy connections alone
    }
    for (Socket s : sockets) {
      closeQuietly(s); // first, so that nothing held during the cut is delivered
    }
    gateLock.lock();
    try {
      cut = false;
      gateOpen.signalAll();
    } finally {
      gateLock.unlock();
    }
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (refusing) {
        closeQuietly(client);
        continue;
      }
      Socket server = new Socket();
      try {
        server.connect(target, 5_000);
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
      } catch (IOException e) {
        closeQuietly(client); // the server is down: the client sees its connection refused
        closeQuietly(server);
        continue;
      }
      sockets.add(client);
      sockets.add(server);
      pump(client, server, false);
      pump(server, client, true);
    }
  }

  /** Copies one direction: a reader thread queues chunks, a writer thread passes them on. */
  private void pump(Socket from, Socket to, boolean towardClient) {
    LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try {
                InputStream in = from.getInputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  queue.put(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime() + delayNanos));
                }
              } catch (IOException | InterruptedException e) {
                // closed
              }
              queue.add(Chunk.END);
            },
            "proxy-read");
    Thread writer =
        new Thread(
            () -> {
              try {
                OutputStream out = to.getOutputStream();
                while (true) {
                  Chunk chunk = queue.take();
                  if (chunk == Chunk.END) {
                    break;
                  }
                  long wait = chunk.due - System.nanoTime();
                  if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait); // the injected latency itself
                  }
                  awaitGate();
                  if (towardClient && dropNextReply.compareAndSet(true, false)) {
                    droppedReplies.incrementAndGet();
                    if (resetOnDrop) {
                      reset(to);
                      reset(from);
                    }
                    break; // then both sockets are closed
                  }
                  out.write(chunk.bytes);
                }
              } catch (IOException | InterruptedException e) {
                // closed
              }
              closeQuietly(from);
              closeQuietly(to);
            },
            "proxy-write");
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }

  private void awaitGate() throws InterruptedException {
    if (!cut) {
      return;
    }
    gateLock.lock();
    try {
      while (cut) {
        gateOpen.await();
      }
    } finally {
      gateLock.unlock();
    }
  }

  /** Closes with an RST instead of a FIN, as a dead peer's network stack would answer. */
  private void reset(Socket s) {
    try {
      s.setSoLinger(true, 0);
    } catch (IOException e) {
      // closed already
    }
    closeQuietly(s);
  }

  private void closeQuietly(Socket s) {
    sockets.remove(s);
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException e) {
      // closing anyway
    }
    for (Socket s : sockets) {
      closeQuietly(s);
    }
    heal();
  }

  private record Chunk(byte[] bytes, long due) {
    static final Chunk END = new Chunk(new byte[0], 0);
  }
}
