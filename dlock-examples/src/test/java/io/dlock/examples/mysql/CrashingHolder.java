package io.dlock.examples.mysql;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * A lock holder in an OS process of its own, which the test kills ({@code SIGKILL}) while it holds
 * the lock: a real crash, with no {@code finally}, no shutdown hook and no release. It prints
 * {@value #HELD} and the fencing token (0 for the flawed lock table, which has none) once it holds
 * the lock, then waits to be killed.
 *
 * <p>Arguments: {@code flawed|lease-row}, the JDBC URL, the lock name.
 */
final class CrashingHolder {
  static final String HELD = "HELD ";

  /** The lease of the lease-row holder: renewed every third of it while the process lives. */
  static final Duration LEASE = Duration.ofSeconds(1);

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String url = args[1];
    String name = args[2];
    if (mode.equals("flawed")) {
      FlawedLockTable table = new FlawedLockTable(new MariaDbDataSource(url), Duration.ZERO);
      if (!table.tryLock(name)) {
        throw new IllegalStateException("the lock was taken: " + name);
      }
      System.out.println(HELD + 0);
    } else {
      LockClient locks = LeaseRowLockTable.newClient(url);
      Lease lease =
          locks
              .lock(name, LockOptions.defaults().withRenewedLease(LEASE))
              .tryAcquire()
              .orElseThrow();
      System.out.println(HELD + lease.fencingToken());
    }
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE); // until killed; the lease-row client renews meanwhile
  }

  /** A running holder process. */
  record Running(Process process, long fencingToken) implements AutoCloseable {
    /** Kills the process the way a crash ends it: no cleanup runs. */
    void crash() throws InterruptedException {
      process.destroyForcibly();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the holder process did not die");
      }
    }

    /** Kills the process if a test left it alive. */
    @Override
    public void close() {
      if (process.isAlive()) {
        try {
          crash();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /** Starts a holder and returns once it holds the lock. */
  static Running start(String mode, String url, String name) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                CrashingHolder.class.getName(),
                mode,
                url,
                name)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith(HELD)) {
        return new Running(process, Long.parseLong(line.substring(HELD.length()).trim()));
      }
    }
    process.destroyForcibly();
    throw new IllegalStateException("the holder process ended before it held the lock: " + name);
  }
}
