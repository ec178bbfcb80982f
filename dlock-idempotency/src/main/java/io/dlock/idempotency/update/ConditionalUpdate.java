package io.dlock.idempotency.update;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * An update whose {@code WHERE} clause carries the rule, so that checking and writing are one
 * atomic statement and no lock is needed:
 *
 * <pre>{@code
 * boolean sold = ConditionalUpdate.run(dataSource,
 *     "UPDATE stock SET n = n - ? WHERE id = ? AND n >= ?", quantity, sku, quantity);
 * }</pre>
 *
 * <p>The database serializes concurrent updates of one row, and each re-evaluates the condition on
 * the row as the previous one left it, so the stock can never go below zero. {@code run} says
 * whether the update applied (changed at least one row); false means the condition did not hold (or
 * no row matched), never an error. Parameters are bound with {@code setObject}; SQL errors throw
 * {@link UpdateFailedException}.
 */
public final class ConditionalUpdate {
  private ConditionalUpdate() {}

  /**
   * Runs {@code sql} once on a connection of its own, in auto-commit.
   *
   * @return whether it changed at least one row
   */
  public static boolean run(DataSource dataSource, String sql, Object... params) {
    return run(dataSource, RetryPolicy.once(), sql, params);
  }

  /**
   * Runs {@code sql} on a connection of its own, in auto-commit, repeating it (with {@code retry}'s
   * backoff) only when the database aborted it for a transient conflict: a deadlock or
   * serialization failure (SQLState class 40, MySQL error 1213). A condition that does not hold is
   * an answer, not a conflict: it is not retried.
   *
   * @return whether it changed at least one row
   * @throws UpdateFailedException on any other SQL error, or when the tries ran out
   */
  public static boolean run(
      DataSource dataSource, RetryPolicy retry, String sql, Object... params) {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(retry, "retry");
    checkSql(sql);
    for (int attempt = 1; ; attempt++) {
      try (Connection c = dataSource.getConnection()) {
        if (!c.getAutoCommit()) {
          c.setAutoCommit(true);
        }
        return execute(c, sql, params) > 0;
      } catch (SQLException e) {
        if (!isTransientConflict(e) || attempt >= retry.maxAttempts()) {
          throw failed(sql, e);
        }
      }
      retry.backOff(attempt);
    }
  }

  /**
   * Runs {@code sql} once on {@code connection}, inside whatever transaction it is in.
   *
   * @return whether it changed at least one row
   */
  public static boolean run(Connection connection, String sql, Object... params) {
    Objects.requireNonNull(connection, "connection");
    checkSql(sql);
    try {
      return execute(connection, sql, params) > 0;
    } catch (SQLException e) {
      throw failed(sql, e);
    }
  }

  static int execute(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      return ps.executeUpdate();
    }
  }

  static boolean isTransientConflict(SQLException e) {
    String state = e.getSQLState();
    return state != null && state.startsWith("40") || e.getErrorCode() == 1213;
  }

  static UpdateFailedException failed(String sql, SQLException e) {
    return new UpdateFailedException(
        "Update failed: "
            + e.getMessage()
            + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]")
            + " in: "
            + sql,
        e);
  }

  private static void checkSql(String sql) {
    Objects.requireNonNull(sql, "sql");
    if (sql.isBlank()) {
      throw new IllegalArgumentException("sql must be an UPDATE, DELETE or INSERT, but was blank");
    }
  }
}
