package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * A session-lock grant whose statement InnoDB picked as a deadlock's victim (CI saw it under load:
 * a waiting acquisition failed with BackendUnavailableException) is tried again, and the lock its
 * rolled-back statement had taken (GET_LOCK is not transactional) is given back first: else the
 * session would hold it twice and keep it after the release.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionLockDeadlockTest {
  private static final long LEASE = 30_000;

  private JdbcLockSettings settings;

  @BeforeEach
  void tables() {
    settings = TestDatabases.settings(TestDatabases.mariaDb().orElseThrow(), JdbcLockMode.SESSION);
    JdbcLockBackend.connect(settings).close(); // creates the tables
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(TestDatabases.mariaDb().orElseThrow());
  }

  @Test
  void mariaDbGivesBackTheLockOfItsRolledBackStatementAndGrantsOnTheNextTry() throws Exception {
    MariaDbSessionLockStatements statements =
        new MariaDbSessionLockStatements(settings.table(), Duration.ofSeconds(5));
    String name = "deadlock-" + UUID.randomUUID();
    String key = statements.key(name);
    try (Connection c = connect()) {
      Connection victim =
          LosingCommits.deadlockOnce(
              c,
              "INSERT INTO " + settings.table() + "_held",
              (real, parameters) -> assertThat(getLock(real, key)).isEqualTo(1));
      HeldLockStatements.Granted granted =
          statements.lock(victim, name, "o:deadlock", "test", LEASE, LEASE * 2);
      assertThat(granted).as("granted on the try after the deadlock").isNotNull();
      statements.unlock(c, name, "o:deadlock", granted.token());
      try (Connection other = connect()) {
        assertThat(getLock(other, key)).as("free once released: no count of it left").isEqualTo(1);
      }
    }
  }

  @Test
  void mySqlWritesItsRecordAgainAndKeepsTheLock() throws Exception {
    JdbcLockSettings mySql =
        TestDatabases.mySqlSettings(TestDatabases.mariaDb().orElseThrow(), JdbcLockMode.SESSION);
    JdbcLockBackend.connect(mySql).close(); // the MySQL dialect's tables (a counter, no sequence)
    MySqlSessionLockStatements statements =
        new MySqlSessionLockStatements(mySql.table(), Duration.ofSeconds(5));
    String name = "deadlock-" + UUID.randomUUID();
    try (Connection c = connect()) {
      Connection victim =
          LosingCommits.deadlockOnce(
              c, "UPDATE " + mySql.table() + "_held", (real, parameters) -> {});
      HeldLockStatements.Granted granted =
          statements.lock(victim, name, "o:deadlock", "test", LEASE, LEASE * 2);
      assertThat(granted).as("granted on the record's second write").isNotNull();
      try (Connection other = connect()) {
        assertThat(getLock(other, statements.key(name))).as("still held").isEqualTo(0);
      }
      statements.unlock(c, name, "o:deadlock", granted.token());
    }
  }

  private static int getLock(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, 0)")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
