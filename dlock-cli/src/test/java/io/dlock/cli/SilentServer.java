package io.dlock.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A server that never answers: it listens on a free loopback port, accepts every connection and
 * never writes a byte, as a hung server or a black-holing proxy does. Closing it closes the
 * connections it holds, so a client still connecting fails at once rather than at its own timeout.
 */
final class SilentServer implements AutoCloseable {
  private final ServerSocket socket;
  private final List<Socket> accepted = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  SilentServer() throws IOException {
    socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor = new Thread(this::accept, "silent-server-" + socket.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return socket.getLocalPort();
  }

  /** How many connections it has accepted. */
  int accepted() {
    return accepted.size();
  }

  private void accept() {
    while (!socket.isClosed()) {
      try {
        accepted.add(socket.accept());
      } catch (IOException closed) {
        return;
      }
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
    for (Socket s : accepted) {
      s.close();
    }
  }
}
