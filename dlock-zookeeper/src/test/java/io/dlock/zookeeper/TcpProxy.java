package io.dlock.zookeeper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy to one ZooKeeper server that a test can cut and restore: cut, it drops every
 * connection and closes each new one at once (a client sees its server go away and keeps trying);
 * restored, it forwards again. A test partitions one client this way while others keep talking to
 * the server directly.
 */
final class TcpProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;
  private volatile boolean closed;

  /** Starts forwarding to {@code 127.0.0.1:targetPort}, cut from the start if {@code cut}. */
  TcpProxy(int targetPort, boolean cut) throws IOException {
    this.targetPort = targetPort;
    this.cut = cut;
    this.listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    daemon("tcp-proxy-accept", this::acceptLoop).start();
  }

  /** {@code 127.0.0.1:<port>} of the proxy, for a connect string. */
  String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** Drops every connection and refuses new ones until {@link #restore()}. */
  void cut() {
    cut = true;
    for (Socket socket : open) {
      closeQuietly(socket);
    }
  }

  void restore() {
    cut = false;
  }

  @Override
  public void close() {
    closed = true;
    cut();
    closeQuietly(listener);
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (cut) {
        closeQuietly(client);
        continue;
      }
      Socket server = new Socket();
      try {
        server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(server);
        continue;
      }
      open.add(client);
      open.add(server);
      if (cut) { // cut while connecting: cut() may have missed these two
        closeQuietly(client);
        closeQuietly(server);
        continue;
      }
      daemon("tcp-proxy-up", () -> pump(client, server)).start();
      daemon("tcp-proxy-down", () -> pump(server, client)).start();
    }
  }

  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[8192];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed: close both below
    } finally {
      closeQuietly(from);
      closeQuietly(to);
      open.remove(from);
      open.remove(to);
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    return thread;
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // closing anyway
    }
  }
}
