package io.dlock.torture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A worker's connection to the {@link RegisterServer}: one request, one answer line. */
final class RegisterClient implements AutoCloseable {
  private final Socket socket;
  private final BufferedReader in;
  private final OutputStream out;
  private final String worker;

  RegisterClient(int port, String worker) {
    this.worker = worker;
    try {
      socket = new Socket(InetAddress.getLoopbackAddress(), port);
      socket.setTcpNoDelay(true);
      in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      out = socket.getOutputStream();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reach the register server on port " + port, e);
    }
  }

  long unfencedRead(String lock) {
    return Long.parseLong(call("UREAD " + worker + " " + lock));
  }

  /**
   * The token is not checked (the register is unfenced); it only tells holders of one grant apart.
   */
  String unfencedWrite(String lock, long token, long expected, long update) {
    return call("UWRITE " + worker + " " + lock + " " + expected + " " + update + " " + token);
  }

  /** The value, or -1 if the register rejected the token. */
  long fencedRead(String lock, long token) {
    String answer = call("FREAD " + worker + " " + lock + " " + token);
    return answer.startsWith("ok ") ? Long.parseLong(answer.substring(3)) : -1;
  }

  String fencedWrite(String lock, long token, long expected, long update) {
    return call("FWRITE " + worker + " " + lock + " " + token + " " + expected + " " + update);
  }

  /** Tells the coordinator that this worker closes its client now, holding {@code lock}. */
  void closing(String lock) {
    call("CLOSING " + worker + " " + lock);
  }

  private String call(String request) {
    try {
      out.write((request + "\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String answer = in.readLine();
      if (answer == null) {
        throw new IOException("the register server closed the connection");
      }
      return answer;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
