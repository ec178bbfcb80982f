package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Session and row modes when a holder goes silent (its host crashed, its network was cut, its
 * process hangs): the database frees the lock by itself within the bound docs/jdbc.md states (lease
 * + heartbeat interval + 1 s of silence, then the waiters' next retry), instead of keeping the dead
 * holder's session for hours; and an unlock stuck on a silent socket does not hold up other
 * holders' renewals.
 */
// A separate thread: without the fix, closing a client whose unlock is stuck never returns.
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SilentHolderTest {
  private static final Duration LEASE = Duration.ofSeconds(2);

  /** What docs/jdbc.md states: the lease, the heartbeat interval and 1 s, then one retry. */
  private static Duration statedBound(JdbcLockSettings settings) {
    return LEASE.plus(settings.heartbeatInterval().multipliedBy(2)).plusSeconds(1);
  }

  @Test
  void postgresSessionHolderGoneSilentIsReplacedWithinTheStatedBound() throws Exception {
    silentHolderIsReplaced(TestDatabases.postgres(), JdbcLockMode.SESSION);
  }

  @Test
  void postgresRowHolderGoneSilentIsReplacedWithinTheStatedBound() throws Exception {
    silentHolderIsReplaced(TestDatabases.postgres(), JdbcLockMode.ROW);
  }

  @Test
  void mariaDbSessionHolderGoneSilentIsReplacedWithinTheStatedBound() throws Exception {
    silentHolderIsReplaced(mariaDb(), JdbcLockMode.SESSION);
  }

  @Test
  void mariaDbRowHolderGoneSilentIsReplacedWithinTheStatedBound() throws Exception {
    silentHolderIsReplaced(mariaDb(), JdbcLockMode.ROW);
  }

  private static String mariaDb() {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    return TestDatabases.mariaDb().orElseThrow();
  }

  private static void silentHolderIsReplaced(String url, JdbcLockMode mode) throws Exception {
    String host = url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$1");
    int port = Integer.parseInt(url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$2"));
    JdbcLockSettings direct = TestDatabases.settings(url, mode);
    try (SilentProxy proxy = new SilentProxy(host, port);
        LockClient cutOff =
            JdbcLocks.newClient(
                TestDatabases.settings(proxy.proxied(url), mode), LockClientOptions.defaults());
        LockClient next = JdbcLocks.newClient(direct, LockClientOptions.defaults())) {
      String name = "silent-" + mode + "-" + UUID.randomUUID();
      Lease held =
          cutOff
              .lock(name, LockOptions.defaults().withRenewedLease(LEASE))
              .tryAcquire()
              .orElseThrow();
      assertThat(next.lock(name).tryAcquire()).isEmpty();

      proxy.silence();
      long cut = System.nanoTime();
      Lease taken = next.lock(name).acquire(millis(20_000));
      Duration took = Duration.ofNanos(System.nanoTime() - cut);
      System.out.printf(
          "measured: %s %s holder gone silent, next holder after %d ms (stated bound %d ms)%n",
          url.substring(5, url.indexOf(':', 5)),
          mode,
          took.toMillis(),
          statedBound(direct).toMillis());

      assertThat(took)
          .as("the next holder waited for the silent one's lock")
          .isLessThan(statedBound(direct).plus(millis(1_000)));
      assertThat(taken.fencingToken()).isGreaterThan(held.fencingToken());
      await().atMost(millis(5_000)).until(() -> !held.isValid());
      taken.release();
      // The silent sockets closed before the cut-off client: closing a client whose connections
      // hang in silence takes 6 s (row mode) to 21 s (PostgreSQL's session mode), a defect of
      // close() left to the safety issue; this test measures the replacement, not the close.
      proxy.close();
    }
  }

  /**
   * Five releases stuck on silent sockets (their server processes stopped) outnumber the client's
   * call threads; a sixth lock of the same client, renewed every 200 ms, must stay valid.
   */
  @Test
  void unlocksStuckOnSilentSocketsDoNotHoldUpAnotherHoldersRenewals() throws Exception {
    String url = TestDatabases.postgres();
    JdbcLockSettings settings = TestDatabases.settings(url, JdbcLockMode.SESSION);
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection admin = DriverManager.getConnection(url)) {
      String prefix = "stuck-" + UUID.randomUUID() + "-";
      List<Lease> stuck = new ArrayList<>();
      for (int i = 0; i < settings.maxConcurrentCalls() + 1; i++) {
        stuck.add(
            client
                .lock(prefix + i, LockOptions.defaults().withFixedLease(Duration.ofSeconds(30)))
                .tryAcquire()
                .orElseThrow());
      }
      Lease renewed =
          client
              .lock(prefix + "renewed", LockOptions.defaults().withRenewedLease(millis(600)))
              .tryAcquire()
              .orElseThrow();
      List<Long> pids = new ArrayList<>();
      for (int i = 0; i < stuck.size(); i++) {
        pids.add(sessionOf(admin, prefix + i));
      }
      try {
        for (long pid : pids) {
          assumeTrue(signal("STOP", pid), "cannot stop the server process of a session");
        }
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (Lease lease : stuck) {
          releases.add(
              CompletableFuture.runAsync(
                  () -> {
                    try {
                      lease.release();
                    } catch (BackendUnavailableException expected) {
                      // the release's bound ran out on the silent socket
                    }
                  }));
        }
        // Unscaled: the releases give up at the client's operation timeout (5 s).
        await()
            .during(Duration.ofMillis(3_000))
            .atMost(Duration.ofMillis(4_000))
            .until(
                () -> renewed.isValid() && releases.stream().noneMatch(CompletableFuture::isDone));
      } finally {
        for (long pid : pids) {
          signal("CONT", pid);
        }
      }
      assertThat(renewed.release()).isTrue();
    }
  }

  private static long sessionOf(Connection admin, String name) throws SQLException {
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT session_id FROM " + TestDatabases.TABLE + "_held WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getLong(1);
      }
    }
  }

  private static boolean signal(String signal, long pid) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    return kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0;
  }
}
