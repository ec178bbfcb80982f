package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockTimeoutException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PostgreSQL's release signals borrow a connection of the application's pool for {@code LISTEN}:
 * when the client closes, that connection must go back to the pool no longer listening, or the
 * application that borrows it next collects this client's notifications.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PostgresListenConnectionTest {
  private static final int POOL_SIZE = 3;

  @Test
  void theListenConnectionGoesBackToThePoolNoLongerListening() throws Exception {
    String url = TestDatabases.postgres();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(POOL_SIZE);
    config.setConnectionTimeout(1000);
    try (HikariDataSource application = new HikariDataSource(config);
        LockClient holder =
            JdbcLocks.newClient(TestDatabases.settings(url), LockClientOptions.defaults())) {
      String name = "listen-" + UUID.randomUUID();
      Lease held = holder.lock(name).tryAcquire().orElseThrow();
      LockClient waiter =
          JdbcLocks.newClient(
              JdbcLockSettings.of(application).withTable(TestDatabases.TABLE),
              LockClientOptions.defaults());
      // A wait subscribes to release signals (LISTEN on a pooled connection) before it retries.
      assertThatThrownBy(() -> waiter.lock(name).acquire(Duration.ofMillis(200)))
          .isInstanceOf(LockTimeoutException.class);
      waiter.close();
      held.release();

      // Every physical connection of the pool, borrowed at once once the client gave its back.
      List<Integer> channels = new ArrayList<>();
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreExceptions()
          .until(
              () -> {
                channels.clear();
                channels.addAll(listeningPerConnection(application));
                return true;
              });
      assertThat(channels).hasSize(POOL_SIZE).containsOnly(0);
    }
  }

  private static List<Integer> listeningPerConnection(HikariDataSource pool) throws SQLException {
    List<Connection> borrowed = new ArrayList<>();
    try {
      List<Integer> out = new ArrayList<>();
      for (int i = 0; i < POOL_SIZE; i++) {
        Connection c = pool.getConnection();
        borrowed.add(c);
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_listening_channels()")) {
          rs.next();
          out.add(rs.getInt(1));
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
