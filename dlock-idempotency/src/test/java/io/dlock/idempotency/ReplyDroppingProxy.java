package io.dlock.idempotency;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy in front of a server that can lose one reply with the connection it was on:
 * once {@link #dropNextReply armed}, it passes the client's next command on to the server, throws
 * the server's answer away and ends the client's connection, with a reset (RST: Lettuce fails the
 * command, and the caller must retry) or an orderly close (FIN: Lettuce reconnects and re-sends the
 * command by itself). Either way the server has done the work and the client never learns it.
 */
public final class ReplyDroppingProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean dropNext = new AtomicBoolean();
  private volatile boolean resetOnDrop;
  private final AtomicInteger dropped = new AtomicInteger();
  private volatile boolean closed;

  public ReplyDroppingProxy(InetSocketAddress target) {
    this.target = target;
    try {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread acceptor = new Thread(this::acceptLoop, "reply-dropping-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /**
   * The next answer the server sends is thrown away and the client's connection ended: reset if
   * {@code reset}, closed in order otherwise.
   */
  public void dropNextReply(boolean reset) {
    resetOnDrop = reset;
    dropNext.set(true);
  }

  /** How many answers were thrown away so far. */
  public int droppedReplies() {
    return dropped.get();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      Socket server = new Socket();
      try {
        server.connect(target, 5_000);
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
      } catch (IOException e) {
        reset(client);
        reset(server);
        continue;
      }
      sockets.add(client);
      sockets.add(server);
      start("proxy-up", () -> copy(client, server, false));
      start("proxy-down", () -> copy(server, client, true));
    }
  }

  private void copy(Socket from, Socket to, boolean replies) {
    byte[] buffer = new byte[16 * 1024];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buffer)) >= 0) {
        if (replies && dropNext.compareAndSet(true, false)) {
          // The server has answered, so it did the work; the client gets a reset instead.
          dropped.incrementAndGet();
          if (resetOnDrop) {
            reset(to);
          } else {
            to.close();
          }
          reset(from);
          return;
        }
        out.write(buffer, 0, n);
      }
    } catch (IOException e) {
      // closed or reset
    }
    reset(from);
    reset(to);
  }

  private static void start(String name, Runnable task) {
    Thread thread = new Thread(task, name);
    thread.setDaemon(true);
    thread.start();
  }

  private void reset(Socket s) {
    sockets.remove(s);
    try {
      if (!s.isClosed() && s.isConnected()) {
        s.setSoLinger(true, 0); // close with RST, as a crashed middlebox or peer would
      }
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
      reset(s);
    }
  }
}
