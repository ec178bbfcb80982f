package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every bound the server puts on a holding session (idle timeout, TCP keepalive, {@code
 * tcp_user_timeout}, MariaDB's {@code wait_timeout}) is at least the client's trust horizon: the
 * longest open lease plus the heartbeat interval and 1 s. Otherwise the server may drop a holder
 * cut off from it, and free the lock, while the holder still trusts its lease. Read on the holding
 * connection itself, after a grant with a 30 s lease and after a re-entry with a 60 s one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerBoundsTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration LONGER = Duration.ofSeconds(60);

  @Test
  void postgresSessionBoundsCoverTheLongestLease() throws Exception {
    boundsCoverTheLease(
        TestDatabases.postgres(), JdbcLockMode.SESSION, "idle_session_timeout", true);
  }

  @Test
  void postgresRowBoundsCoverTheLongestLease() throws Exception {
    boundsCoverTheLease(
        TestDatabases.postgres(), JdbcLockMode.ROW, "idle_in_transaction_session_timeout", true);
  }

  @Test
  void mariaDbSessionBoundsCoverTheLongestLease() throws Exception {
    boundsCoverTheLease(mariaDb(), JdbcLockMode.SESSION, null, false);
  }

  @Test
  void mariaDbRowBoundsCoverTheLongestLease() throws Exception {
    boundsCoverTheLease(mariaDb(), JdbcLockMode.ROW, null, false);
  }

  private static String mariaDb() {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    return TestDatabases.mariaDb().orElseThrow();
  }

  private static void boundsCoverTheLease(
      String url, JdbcLockMode mode, String idleSetting, boolean postgres) throws Exception {
    RecordingDataSource pool = new RecordingDataSource(url);
    JdbcLockSettings settings =
        JdbcLockSettings.of(pool)
            .withTable(TestDatabases.TABLE)
            .withCreateSchema(true)
            .withMode(mode);
    String name = "bounds-" + mode + "-" + UUID.randomUUID();
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      Lease first =
          client
              .lock(name, LockOptions.defaults().withOwnerId("x").withFixedLease(LEASE))
              .tryAcquire()
              .orElseThrow();
      assertCovered(pool, postgres, idleSetting, horizon(LEASE, settings));

      Lease second =
          client
              .lock(name, LockOptions.defaults().withOwnerId("x").withFixedLease(LONGER))
              .tryAcquire()
              .orElseThrow();
      assertCovered(pool, postgres, idleSetting, horizon(LONGER, settings));
      second.release();
      first.release();
    }
  }

  /** The lease plus the margin: how long the client may trust it after its last statement. */
  private static long horizon(Duration lease, JdbcLockSettings settings) {
    return lease.plus(settings.heartbeatInterval()).plusSeconds(1).toMillis();
  }

  private static void assertCovered(
      RecordingDataSource pool, boolean postgres, String idleSetting, long horizonMillis)
      throws SQLException {
    if (postgres) {
      List<long[]> held =
          pool.query(
              // pg_settings: this session's values, in their base units (ms, s, ms).
              "SELECT "
                  + setting(idleSetting)
                  + ", "
                  + setting("tcp_keepalives_idle")
                  + ", "
                  + setting("tcp_user_timeout")
                  + " WHERE "
                  + setting(idleSetting)
                  + " <> 0",
              3);
      assertThat(held).as("the one holding connection").hasSize(1);
      long[] s = held.get(0);
      assertThat(s[0]).as("idle limit (ms)").isGreaterThanOrEqualTo(horizonMillis);
      assertThat(s[1] * 1000).as("tcp_keepalives_idle (ms)").isGreaterThanOrEqualTo(horizonMillis);
      assertThat(s[2]).as("tcp_user_timeout (ms)").isGreaterThanOrEqualTo(horizonMillis);
    } else {
      List<long[]> held =
          pool.query(
              "SELECT @@session.wait_timeout WHERE @@session.wait_timeout <> @@global.wait_timeout",
              1);
      assertThat(held).as("the one holding connection").hasSize(1);
      assertThat(held.get(0)[0] * 1000)
          .as("wait_timeout (ms)")
          .isGreaterThanOrEqualTo(horizonMillis);
    }
  }

  private static String setting(String name) {
    return "(SELECT setting::bigint FROM pg_settings WHERE name = '" + name + "')";
  }

  /** Plain connections from the driver; remembers each, to read the settings of the open ones. */
  private static final class RecordingDataSource extends TestDataSource {
    private final String url;
    private final List<Connection> opened = new CopyOnWriteArrayList<>();

    RecordingDataSource(String url) {
      this.url = url;
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection c = DriverManager.getConnection(url);
      opened.add(c);
      return c;
    }

    /** Runs {@code sql} on every open connection; the rows of {@code columns} longs. */
    List<long[]> query(String sql, int columns) throws SQLException {
      List<long[]> rows = new ArrayList<>();
      for (Connection c : opened) {
        if (c.isClosed()) {
          continue;
        }
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery(sql)) {
          while (rs.next()) {
            long[] row = new long[columns];
            for (int i = 0; i < columns; i++) {
              row[i] = rs.getLong(i + 1);
            }
            rows.add(row);
          }
        }
      }
      return rows;
    }
  }
}
