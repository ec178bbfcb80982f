package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * H2: {@code SKIP LOCKED}, since H2's {@code NOWAIT} still waits some milliseconds and then throws
 * a timeout, after which HikariCP discards the connection; killing a holder is {@code
 * ABORT_SESSION}.
 */
final class H2RowLockStatements extends RowLockStatements {
  H2RowLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout, H2Dialect.NOW_MILLIS);
  }

  @Override
  String lockClause() {
    return "FOR UPDATE SKIP LOCKED";
  }

  /**
   * No: H2 shows other sessions in {@code INFORMATION_SCHEMA.SESSIONS} to admins only, so the
   * renewal confirms the holding connection with a heartbeat on it (an embedded database: no round
   * trip to save).
   */
  @Override
  boolean renewalConfirmsSession() {
    return false;
  }

  @Override
  boolean skipsLocked() {
    return true;
  }

  @Override
  String nextToken() {
    return "NEXT VALUE FOR " + table + "_fence";
  }

  @Override
  String sessionIdSql() {
    return "SESSION_ID()";
  }

  @Override
  void insertRow(Connection c, String name) throws SQLException {
    try {
      update(
          c,
          "INSERT INTO "
              + table
              + "_rows (name) SELECT CAST(? AS VARCHAR(256)) WHERE NOT EXISTS"
              + " (SELECT 1 FROM "
              + table
              + "_rows WHERE name = ?)",
          name,
          name);
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState()) && !busy(e)) {
        throw e; // a concurrent insert of the same name is fine: the row exists
      }
    }
  }

  @Override
  boolean busy(SQLException e) {
    return e.getErrorCode() == 50200 || "HYT00".equals(e.getSQLState());
  }

  @Override
  String sessionAlive() {
    return "h.session_id IN (SELECT SESSION_ID FROM INFORMATION_SCHEMA.SESSIONS)";
  }

  @Override
  void endSession(Connection admin, String name, long sessionId) throws SQLException {
    // Closes the session at once; its transaction rolls back and frees the row.
    execute(admin, "SELECT ABORT_SESSION(?)", (int) sessionId);
  }
}
