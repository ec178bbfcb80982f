package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A permit acquisition commits by returning to autocommit (one request where a commit and then the
 * return were two on the MySQL family). A new grant whose commit the server applied while its
 * answer was lost must still be handed back for its undo ({@link GrantToUndo}), and the undo on
 * another connection must take the grant back: else its permits stay taken for the lease with
 * nobody holding them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PermitCommitAnswerLostTest {
  private static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(5);

  @Test
  void postgresUndoesAGrantWhoseCommitAnswerWasLost() throws Exception {
    undoesAGrantWhoseCommitAnswerWasLost(TestDatabases.postgres(), PostgresPermitStatements::new);
  }

  @Test
  void mariaDbUndoesAGrantWhoseCommitAnswerWasLost() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    undoesAGrantWhoseCommitAnswerWasLost(
        TestDatabases.mariaDb().orElseThrow(), MySqlPermitStatements::new);
  }

  private interface Statements {
    PermitStatements of(String table, Duration statementTimeout);
  }

  private static void undoesAGrantWhoseCommitAnswerWasLost(String url, Statements dialect)
      throws Exception {
    JdbcLockSettings settings = TestDatabases.settings(url).withStatementTimeout(STATEMENT_TIMEOUT);
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
      assertThat(backend.permits()).isPresent();
      PermitStatements statements = dialect.of(settings.table(), STATEMENT_TIMEOUT);
      PermitAcquisition acquisition = new PermitAcquisition(statements, System::nanoTime);
      String s = "commit-lost-" + UUID.randomUUID();
      String owner = "t:" + UUID.randomUUID();
      try (Connection real = backend.dataSource().getConnection();
          Connection other = backend.dataSource().getConnection()) {
        // The counter row first (its creation rolls back and returns to autocommit: no commit).
        assertThat(acquisition.acquire(real, s, 2, 1, "t:first", "h", 60_000, System.nanoTime()))
            .isInstanceOf(io.dlock.spi.AcquireResult.Granted.class);
        Connection losing = commitAnswerLost(real);
        assertThatThrownBy(
                () -> acquisition.acquire(losing, s, 2, 1, owner, "h", 60_000, System.nanoTime()))
            .isInstanceOfSatisfying(
                GrantToUndo.class,
                lost -> {
                  try {
                    assertThat(grants(other, statements, s, owner))
                        .as("committed, though its answer was lost")
                        .isEqualTo(1);
                    lost.undo().run(other);
                    assertThat(grants(other, statements, s, owner)).as("undone").isZero();
                  } catch (SQLException e) {
                    throw new AssertionError(e);
                  }
                });
      }
    }
  }

  /**
   * {@code real}, whose return to autocommit within a transaction (the commit) is applied and then
   * fails as a connection whose answer was lost.
   */
  private static Connection commitAnswerLost(Connection real) {
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              boolean commits =
                  (method.getName().equals("setAutoCommit") && (Boolean) args[0]
                          || method.getName().equals("commit"))
                      && !real.getAutoCommit();
              Object out;
              try {
                out = method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (commits) {
                throw new SQLNonTransientConnectionException("the answer was lost (test)", "08S01");
              }
              return out;
            });
  }

  private static int grants(Connection c, PermitStatements statements, String s, String owner)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COUNT(*) FROM " + statements.permits + " WHERE semaphore = ? AND owner = ?")) {
      ps.setString(1, s);
      ps.setString(2, owner);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
