package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

/**
 * MySQL 8.0 and later, and the MySQL family's common ground: statements that run unchanged on MySQL
 * 8 and on MariaDB. Lease rows ({@link MySqlLeaseRowStatements}), {@code GET_LOCK} session locks
 * ({@link MySqlSessionLockStatements}) and {@code FOR UPDATE NOWAIT} row locks ({@link
 * MySqlRowLockStatements}); fencing tokens from counter rows ({@link MySqlFences}), since MySQL has
 * no sequences. {@link MariaDbDialect} refines the same statements where MariaDB allows fewer round
 * trips (sequences, {@code RETURNING}). No release signals: the core backs off.
 */
final class MySqlDialect implements JdbcDialect {
  static final String NAME = "MySQL";

  /**
   * The database clock in milliseconds since the epoch: {@code UTC_TIMESTAMP(6)}, which, unlike
   * {@code NOW()}, does not depend on the session's time zone, and, like it, is the same throughout
   * one statement.
   */
  static final String NOW_MILLIS =
      "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";

  @Override
  public LockStatements leaseRowStatements(String table, Duration statementTimeout) {
    return new MySqlLeaseRowStatements(table, statementTimeout);
  }

  @Override
  public PermitStatements permitStatements(String table, Duration statementTimeout) {
    return new MySqlPermitStatements(table, statementTimeout);
  }

  @Override
  public HeldLockStatements sessionLockStatements(
      String table, Duration statementTimeout, Connection c) {
    return new MySqlSessionLockStatements(table, statementTimeout);
  }

  @Override
  public HeldLockStatements rowLockStatements(
      String table, Duration statementTimeout, Connection c) {
    return new MySqlRowLockStatements(table, statementTimeout);
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
    // Rounded up, so never below the horizon; the ceiling is one year on both servers.
    return Math.min(MAX_WAIT_TIMEOUT, Math.max(1, (idleMillis + 999) / 1000));
  }

  static final long MAX_WAIT_TIMEOUT = 31_536_000;
}
