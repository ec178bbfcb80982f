package io.dlock.torture;

import io.dlock.testkit.net.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One worker JVM, the proxies its connections to the backend go through (its own, for the faults to
 * cut and delay), and the owner id it shares with other workers, or null.
 */
record WorkerProcess(String id, Process process, List<TcpProxy> proxies, String ownerId) {

  /** Writes a line to its standard input ({@code close}: close its client at its next hold). */
  void command(String line) {
    try {
      var in = process.getOutputStream();
      in.write((line + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      in.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reach worker " + id, e);
    }
  }

  /** Sends it {@code STOP} or {@code CONT} through kill(1): the JDK can only end a process. */
  void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + id + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
