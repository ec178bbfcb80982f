package io.dlock.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;

/**
 * H2 2.x: lease rows ({@link H2LeaseRowStatements}) and row locks ({@link H2RowLockStatements}); H2
 * has no session-level locks. No release signals: the core backs off.
 */
final class H2Dialect implements JdbcDialect {
  static final String NAME = "H2";

  /** The database clock in milliseconds since the epoch. */
  static final String NOW_MILLIS = "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)";

  @Override
  public LockStatements leaseRowStatements(String table, Duration statementTimeout) {
    return new H2LeaseRowStatements(table, statementTimeout);
  }

  /** Refused: H2 has no session-level (advisory) locks. */
  @Override
  public PermitStatements permitStatements(String table, Duration statementTimeout) {
    return new H2PermitStatements(table, statementTimeout);
  }

  @Override
  public HeldLockStatements sessionLockStatements(
      String table, Duration statementTimeout, Connection c) {
    throw new IllegalArgumentException(
        "mode SESSION needs session-level (advisory) locks, which "
            + NAME
            + " lacks; use mode LEASE_ROW or ROW on "
            + NAME);
  }

  @Override
  public HeldLockStatements rowLockStatements(
      String table, Duration statementTimeout, Connection c) {
    return new H2RowLockStatements(table, statementTimeout);
  }

  @Override
  public Optional<String> releaseChannel(String table) {
    return Optional.empty();
  }
}
