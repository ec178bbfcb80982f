package io.dlock.jdbc;

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
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A loopback TCP proxy whose network can go silent, as a cut cable or a crashed host looks from the
 * other end: after {@link #silence()} nothing passes in either direction, on old and new
 * connections alike, and a connection closed on one side is <em>not</em> closed on the other (a cut
 * network delivers no FIN). Both ends see an open socket that never answers and must rely on their
 * own timeouts. (dlock-torture's proxy heals, and dlock-torture depends on this module.)
 */
final class SilentProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final ReentrantLock gate = new ReentrantLock();
  private final Condition closing = gate.newCondition();
  private volatile boolean silent;
  private volatile boolean closed;

  SilentProxy(String host, int port) {
    this.target = new InetSocketAddress(host, port);
    try {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread acceptor = new Thread(this::acceptLoop, "silent-proxy-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A JDBC URL like {@code url} whose host and port are this proxy's. */
  String proxied(String url) {
    return url.replaceFirst("//[^/]+/", "//127.0.0.1:" + listener.getLocalPort() + "/");
  }

  /** From now on nothing passes, and nothing is closed on the far side. */
  void silence() {
    silent = true;
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return;
      }
      Socket server = new Socket();
      try {
        server.connect(target, 5_000);
      } catch (IOException e) {
        closeQuietly(client);
        continue;
      }
      sockets.add(client);
      sockets.add(server);
      pump(client, server);
      pump(server, client);
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (silent) {
                    holdUntilClosed(); // the bytes are lost in the cut network
                    return;
                  }
                  out.write(buffer, 0, n);
                }
              } catch (IOException e) {
                // closed
              }
              if (!silent) {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "silent-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private void holdUntilClosed() {
    gate.lock();
    try {
      while (!closed) {
        closing.awaitUninterruptibly();
      }
    } finally {
      gate.unlock();
    }
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
    gate.lock();
    try {
      closed = true;
      closing.signalAll();
    } finally {
      gate.unlock();
    }
    try {
      listener.close();
    } catch (IOException e) {
      // closing anyway
    }
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }
}
