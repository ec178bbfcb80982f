package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

/**
 * MariaDB 10.5+ (also behind a MySQL driver): lease rows ({@link MariaDbLeaseRowStatements}),
 * {@code GET_LOCK} session locks ({@link MariaDbSessionLockStatements}) and row locks ({@link
 * MariaDbRowLockStatements}), with what they share: the database clock and the server's bound on a
 * holding session ({@code wait_timeout}). No release signals: the core backs off.
 */
final class MariaDbDialect implements JdbcDialect {
  static final String NAME = "MariaDB";

  /**
   * The database clock in milliseconds since the epoch: {@code UTC_TIMESTAMP(6)}, which, unlike
   * {@code NOW()}, does not depend on the session's time zone.
   */
  static final String NOW_MILLIS =
      "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";

  @Override
  public LockStatements leaseRowStatements(String table, Duration statementTimeout) {
    return new MariaDbLeaseRowStatements(table, statementTimeout);
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

  /**
   * Bounds the session of {@code c}: the server closes a connection idle past {@code wait_timeout}
   * (in a transaction or not), which frees whatever it holds.
   */
  static void boundIdle(HeldLockStatements s, Connection c, long idleMillis) throws SQLException {
    s.execute(c, "SET SESSION wait_timeout = ?", idleSeconds(idleMillis));
  }

  /** Undoes {@link #boundIdle}, before the connection goes back to the pool. */
  static void resetIdle(HeldLockStatements s, Connection c) throws SQLException {
    s.execute(c, "SET SESSION wait_timeout = DEFAULT");
  }

  /** The idle limit in whole seconds (at least one), for {@code wait_timeout}. */
  static long idleSeconds(long idleMillis) {
    // Rounded up, so never below the horizon; MariaDB's ceiling is one year.
    return Math.min(MAX_WAIT_TIMEOUT, Math.max(1, (idleMillis + 999) / 1000));
  }

  static final long MAX_WAIT_TIMEOUT = 31_536_000;
}
