package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * MariaDB: the MySQL family's row locks ({@link MySqlRowLockStatements}), with the token drawn from
 * the sequence in the locking statement itself, and lock waits bounded within one statement ({@code
 * SET STATEMENT ... FOR}, {@code FOR UPDATE WAIT n}) instead of around it.
 */
final class MariaDbRowLockStatements extends MySqlRowLockStatements {
  MariaDbRowLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
  }

  @Override
  String nextToken() {
    return "NEXTVAL(" + table + "_fence)";
  }

  @Override
  Granted drawApart(Connection other, String name, Granted locked) {
    return locked; // drawn in the locking statement
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
  void waitForRow(Connection admin, String name, int seconds) throws SQLException {
    execute(
        admin,
        "SELECT name FROM " + table + "_rows WHERE name = ? FOR UPDATE WAIT " + seconds,
        name);
  }
}
