package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/** MariaDB: {@code NOWAIT} fails with error 1205; killing a holder is {@code KILL}. */
final class MariaDbRowLockStatements extends RowLockStatements {
  MariaDbRowLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout, MariaDbDialect.NOW_MILLIS);
  }

  @Override
  String nextToken() {
    return "NEXTVAL(" + table + "_fence)";
  }

  /** The server closes a connection idle past {@code wait_timeout}, in a transaction or not. */
  @Override
  void bound(Connection c, long idleMillis) throws SQLException {
    MariaDbDialect.boundIdle(this, c, idleMillis);
  }

  @Override
  void unbound(Connection c) throws SQLException {
    MariaDbDialect.resetIdle(this, c);
  }

  @Override
  String sessionIdSql() {
    return "CONNECTION_ID()";
  }

  @Override
  void insertRow(Connection c, String name) throws SQLException {
    // INSERT IGNORE of an existing key waits for a shared lock on it: bound that wait, since
    // another transaction may have inserted and locked the row since our SELECT.
    try {
      update(
          c,
          "SET STATEMENT innodb_lock_wait_timeout = 1 FOR INSERT IGNORE INTO "
              + table
              + "_rows (name) VALUES (?)",
          name);
    } catch (SQLException e) {
      if (!busy(e)) {
        throw e;
      }
    }
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
    execute(admin, "KILL CONNECTION ?", sessionId);
    // The killed transaction rolls back as the connection ends: wait for the row to be free.
    boolean auto = admin.getAutoCommit();
    admin.setAutoCommit(false);
    try {
      execute(
          admin,
          "SELECT name FROM "
              + table
              + "_rows WHERE name = ? FOR UPDATE WAIT "
              + Math.max(1, queryTimeoutSeconds - 1),
          name);
    } finally {
      admin.rollback();
      admin.setAutoCommit(auto);
    }
  }
}
