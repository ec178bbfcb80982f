package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The settings that bound a holding session on the server (idle timeouts, keepalive) are undone
 * when the lock is released: the application's pool gets its connections back as they were.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrantSessionSettingsTest {
  private static final int POOL_SIZE = 6;

  @Test
  void postgresSessionSettingsAreUndoneAtRelease() throws Exception {
    settingsAreUndone(
        TestDatabases.postgres(),
        JdbcLockMode.SESSION,
        "SELECT current_setting('idle_session_timeout') || ',' ||"
            + " current_setting('tcp_keepalives_idle') || ',' || current_setting('tcp_user_timeout')");
  }

  @Test
  void postgresRowSettingsAreUndoneAtRelease() throws Exception {
    settingsAreUndone(
        TestDatabases.postgres(),
        JdbcLockMode.ROW,
        "SELECT current_setting('idle_in_transaction_session_timeout') || ',' ||"
            + " current_setting('tcp_keepalives_count') || ',' || current_setting('tcp_user_timeout')");
  }

  @Test
  void mariaDbSessionSettingsAreUndoneAtRelease() throws Exception {
    settingsAreUndone(mariaDb(), JdbcLockMode.SESSION, "SELECT @@session.wait_timeout");
  }

  @Test
  void mariaDbRowSettingsAreUndoneAtRelease() throws Exception {
    settingsAreUndone(mariaDb(), JdbcLockMode.ROW, "SELECT @@session.wait_timeout");
  }

  private static String mariaDb() {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    return TestDatabases.mariaDb().orElseThrow();
  }

  private static void settingsAreUndone(String url, JdbcLockMode mode, String query)
      throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(POOL_SIZE);
    config.setMinimumIdle(POOL_SIZE);
    try (HikariDataSource application = new HikariDataSource(config)) {
      List<String> before = settingsOfEveryConnection(application, query);
      assertThat(before).hasSize(POOL_SIZE).containsOnly(before.get(0));
      try (LockClient client =
          JdbcLocks.newClient(
              JdbcLockSettings.of(application)
                  .withTable(TestDatabases.TABLE)
                  .withMode(mode)
                  .withCreateSchema(true), // this test may run first on a fresh database
              LockClientOptions.defaults())) {
        String name = "settings-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
          Lease lease = client.lock(name + i).tryAcquire().orElseThrow();
          assertThat(lease.release()).isTrue();
        }
      }
      assertThat(settingsOfEveryConnection(application, query))
          .as("every connection of the pool, after the locks were released")
          .containsOnly(before.get(0));
    }
  }

  private static List<String> settingsOfEveryConnection(HikariDataSource pool, String query)
      throws SQLException {
    List<Connection> borrowed = new ArrayList<>();
    try {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < POOL_SIZE; i++) {
        Connection c = pool.getConnection();
        borrowed.add(c);
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery(query)) {
          rs.next();
          out.add(rs.getString(1));
        }
      }
      return out;
    } finally {
      for (Connection c : borrowed) {
        c.close();
      }
    }
  }
}
