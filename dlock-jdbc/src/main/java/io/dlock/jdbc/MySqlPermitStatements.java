package io.dlock.jdbc;

import java.time.Duration;

/**
 * The MySQL family's permit statements, for MySQL 8 and MariaDB alike: a counter row created with
 * {@code INSERT IGNORE}, and the read of the live grants a locking one. InnoDB's plain reads in a
 * repeatable-read transaction see the snapshot of the transaction's first plain read; a locking
 * read sees the newest committed rows, as the sum of the permits held must. No release signals.
 */
final class MySqlPermitStatements extends PermitStatements {
  MySqlPermitStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
  }

  @Override
  String nowMillis() {
    return MySqlDialect.NOW_MILLIS;
  }

  @Override
  String createCounterSql() {
    return "INSERT IGNORE INTO " + semaphores + " (name, fence) VALUES (?, 0)";
  }

  @Override
  String liveGrants() {
    return super.liveGrants() + " FOR UPDATE";
  }
}
