package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Row locks on MySQL 8 (and unchanged on MariaDB): {@code FOR UPDATE NOWAIT} fails with error 3572
 * (MariaDB: 1205); the fencing token is drawn apart, once the row is locked ({@link #drawApart}),
 * since MySQL has no sequence to draw from in the locking statement. A lock wait that must be
 * bounded is bounded by the session's {@code innodb_lock_wait_timeout}, set around the statement
 * and put back after it (MariaDB sets it within the statement: {@link MariaDbRowLockStatements}).
 * Killing a holder is {@code KILL CONNECTION}.
 */
class MySqlRowLockStatements extends RowLockStatements {
  private final MySqlFences fences;

  MySqlRowLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout, MySqlDialect.NOW_MILLIS);
    this.fences = new MySqlFences(table, queryTimeoutSeconds);
  }

  @Override
  String nextToken() {
    return "0"; // drawn apart: see drawApart
  }

  /**
   * Draws the token through {@code other} in autocommit, while the holding transaction has the row:
   * the draws of one name are ordered as its grants, and a draw survives a holder whose transaction
   * rolls back with its session, so the next holder never gets its token again.
   */
  @Override
  Granted drawApart(Connection other, String name, Granted locked) throws SQLException {
    return new Granted(fences.drawCommitted(other, name), locked.sessionId());
  }

  /** The server closes a connection idle past {@code wait_timeout}, in a transaction or not. */
  @Override
  void bound(Connection c, long idleMillis) throws SQLException {
    MySqlDialect.boundIdle(this, c, idleMillis);
  }

  @Override
  void unbound(Connection c) throws SQLException {
    MySqlDialect.resetIdle(this, c);
  }

  @Override
  String sessionIdSql() {
    return "CONNECTION_ID()";
  }

  @Override
  void insertRow(Connection c, String name) throws SQLException {
    // INSERT IGNORE of an existing key waits for a shared lock on it: bound that wait, since
    // another transaction may have inserted and locked the row since our SELECT.
    boundedLockWait(
        c,
        1,
        () -> {
          try {
            update(c, "INSERT IGNORE INTO " + table + "_rows (name) VALUES (?)", name);
          } catch (SQLException e) {
            if (!busy(e)) {
              throw e;
            }
          }
        });
  }

  @Override
  boolean busy(SQLException e) {
    return e.getErrorCode() == 1205 || e.getErrorCode() == 3572;
  }

  @Override
  boolean insertsWithoutWaiting() {
    return false;
  }

  @Override
  String insertRecordSql() {
    return insertValues().replaceFirst("INSERT INTO", "INSERT IGNORE INTO");
  }

  @Override
  String sessionAlive() {
    return "h.session_id IN (SELECT ID FROM information_schema.PROCESSLIST)";
  }

  @Override
  void endSession(Connection admin, String name, long sessionId) throws SQLException {
    execute(admin, "KILL CONNECTION " + sessionId); // a number read from the server, not text
    // The killed transaction rolls back as the connection ends: wait for the row to be free.
    boolean auto = admin.getAutoCommit();
    admin.setAutoCommit(false);
    try {
      waitForRow(admin, name, Math.max(1, queryTimeoutSeconds - 1));
    } finally {
      admin.rollback();
      admin.setAutoCommit(auto);
    }
  }

  /** Locks the row of {@code name}, waiting at most {@code seconds}, in the open transaction. */
  void waitForRow(Connection admin, String name, int seconds) throws SQLException {
    boundedLockWait(
        admin,
        seconds,
        () ->
            execute(admin, "SELECT name FROM " + table + "_rows WHERE name = ? FOR UPDATE", name));
  }

  /**
   * Runs {@code statement} with the session's lock wait bounded to {@code seconds}, then puts back
   * the session's own value (a pool may have set one; {@code DEFAULT} would be the global's).
   */
  private void boundedLockWait(Connection c, int seconds, SqlStep statement) throws SQLException {
    long before;
    try (PreparedStatement ps = prepare(c, "SELECT @@SESSION.innodb_lock_wait_timeout");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      before = rs.getLong(1);
    }
    execute(c, "SET SESSION innodb_lock_wait_timeout = ?", seconds);
    SQLException failed = null;
    try {
      statement.run();
    } catch (SQLException e) {
      failed = e;
      throw e;
    } finally {
      try {
        execute(c, "SET SESSION innodb_lock_wait_timeout = ?", before);
      } catch (SQLException e) {
        if (failed == null) {
          throw e;
        }
        failed.addSuppressed(e); // the statement's own failure is the one to report
      }
    }
  }

  @FunctionalInterface
  private interface SqlStep {
    void run() throws SQLException;
  }
}
