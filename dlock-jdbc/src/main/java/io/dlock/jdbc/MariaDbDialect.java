package io.dlock.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;

/**
 * MariaDB 10.5+ (also behind a MySQL driver): the MySQL family's statements ({@link MySqlDialect}),
 * refined where MariaDB's sequences and {@code INSERT ... RETURNING} help: lease rows draw from a
 * sequence ({@link MariaDbLeaseRowStatements}); {@code GET_LOCK} session locks ({@link
 * MariaDbSessionLockStatements}) and row locks ({@link MariaDbRowLockStatements}) save round trips.
 * No release signals: the core backs off.
 */
final class MariaDbDialect implements JdbcDialect {
  static final String NAME = "MariaDB";

  @Override
  public LockStatements leaseRowStatements(String table, Duration statementTimeout) {
    return new MariaDbLeaseRowStatements(table, statementTimeout);
  }

  @Override
  public PermitStatements permitStatements(String table, Duration statementTimeout) {
    return new MySqlPermitStatements(table, statementTimeout);
  }

  @Override
  public HeldLockStatements sessionLockStatements(
      String table, Duration statementTimeout, Connection c) {
    return new MariaDbSessionLockStatements(table, statementTimeout);
  }

  @Override
  public HeldLockStatements rowLockStatements(
      String table, Duration statementTimeout, Connection c) {
    return new MariaDbRowLockStatements(table, statementTimeout);
  }

  @Override
  public Optional<String> releaseChannel(String table) {
    return Optional.empty();
  }
}
