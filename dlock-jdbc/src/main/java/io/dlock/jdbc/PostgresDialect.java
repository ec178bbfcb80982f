package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * PostgreSQL: lease rows ({@link PostgresLeaseRowStatements}), advisory session locks ({@link
 * PostgresSessionLockStatements}) and row locks ({@link PostgresRowLockStatements}), with what they
 * share: the database clock, the {@code NOTIFY} channel of releases, the server's bounds on a
 * holding session and the ending of a holder's backend.
 */
final class PostgresDialect implements JdbcDialect {
  static final String NAME = "PostgreSQL";

  /** The database clock in milliseconds since the epoch; moves within a statement. */
  static final String NOW_MILLIS = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint";

  /**
   * Clears a connection-bound grant's record ({@code <t>_held}: name, token) and sends the release
   * signal in one statement; parameters name, token, channel, name. A signal sent when nothing was
   * cleared only wakes a waiter to try once more.
   */
  static String clearRecordAndNotifySql(String held) {
    return "WITH u AS (UPDATE "
        + held
        + " SET owner = NULL WHERE name = ? AND token = ? RETURNING 1) SELECT pg_notify(?, ?)";
  }

  /** The NOTIFY channel of the table's releases; the payload is the lock name. */
  static String channel(String table) {
    return "dlock_" + table;
  }

  @Override
  public LockStatements leaseRowStatements(String table, Duration statementTimeout) {
    return new PostgresLeaseRowStatements(table, statementTimeout);
  }

  @Override
  public PermitStatements permitStatements(String table, Duration statementTimeout) {
    return new PostgresPermitStatements(table, statementTimeout);
  }

  @Override
  public HeldLockStatements sessionLockStatements(
      String table, Duration statementTimeout, Connection c) throws SQLException {
    return new PostgresSessionLockStatements(
        table, statementTimeout, channel(table), c.getMetaData().getDatabaseMajorVersion());
  }

  @Override
  public HeldLockStatements rowLockStatements(String table, Duration statementTimeout, Connection c)
      throws SQLException {
    return new PostgresRowLockStatements(
        table, statementTimeout, channel(table), c.getMetaData().getDatabaseMajorVersion());
  }

  @Override
  public Optional<String> releaseChannel(String table) {
    return Optional.of(channel(table));
  }

  /**
   * A column that bounds a granted session on the server, with one parameter, the client's trust
   * horizon in milliseconds (text): {@code idleSetting} ({@code idle_session_timeout} for a session
   * lock, {@code idle_in_transaction_session_timeout} for a row lock) and {@code tcp_user_timeout}
   * are set to it, {@code tcp_keepalives_idle} to it in whole seconds (at most {@value
   * #MAX_KEEPALIVE_IDLE_SECONDS}, Linux's limit; {@code tcp_user_timeout} still keeps the socket
   * that long on Linux). The database ends a session that idles past the idle limit, so a holder
   * whose process hangs or whose network went silent (the server may never learn of a cut
   * otherwise) holds the lock at most that long; and no bound ends it before the client stopped
   * trusting its lease (the horizon is the longest lease plus a margin). {@code set_config(...,
   * false)} lasts for the session; a rolled-back transaction undoes it, and {@link #boundsResets}
   * undoes it at release.
   */
  static String boundsColumn(String idleSetting) {
    return ", (SELECT set_config('"
        + idleSetting
        + "', b.ms::text, false) || set_config('tcp_keepalives_idle',"
        + " LEAST("
        + MAX_KEEPALIVE_IDLE_SECONDS
        + ", CEIL(b.ms / 1000.0))::bigint::text, false) || set_config('tcp_keepalives_interval', '"
        + KEEPALIVE_INTERVAL_SECONDS
        + "', false) || set_config('tcp_keepalives_count', '"
        + KEEPALIVE_COUNT
        + "', false) || set_config('tcp_user_timeout', b.ms::text, false)"
        + " FROM (SELECT LEAST(2147483647, CAST(? AS bigint)) AS ms) b)";
  }

  /** Statements that undo {@link #boundsColumn}, appended to the release. */
  static String boundsResets(String idleSetting) {
    return "; RESET "
        + idleSetting
        + "; RESET tcp_keepalives_idle; RESET tcp_keepalives_interval;"
        + " RESET tcp_keepalives_count; RESET tcp_user_timeout";
  }

  /** {@link #boundsColumn} on a held connection, with the horizon as its one parameter. */
  static void raiseBounds(
      HeldLockStatements s, Connection c, String idleSetting, long horizonMillis)
      throws SQLException {
    s.execute(c, "SELECT 1" + boundsColumn(idleSetting), Long.toString(horizonMillis));
  }

  /** Undoes {@link #boundsColumn} on {@code c}, in autocommit once the grant has ended. */
  static void resetBounds(HeldLockStatements s, Connection c, String idleSetting)
      throws SQLException {
    try (Statement st = c.createStatement()) {
      st.setQueryTimeout(s.queryTimeoutSeconds);
      st.execute(boundsResets(idleSetting).substring(2));
    }
  }

  static final int MAX_KEEPALIVE_IDLE_SECONDS = 32767;
  static final int KEEPALIVE_INTERVAL_SECONDS = 2;
  static final int KEEPALIVE_COUNT = 3;

  /** {@code pg_terminate_backend}, waiting until the backend has exited. */
  static void terminate(HeldLockStatements s, Connection admin, long pid, int majorVersion)
      throws SQLException {
    if (majorVersion >= 14) {
      // Waits (up to the timeout) until the backend has exited and so freed its locks.
      s.execute(
          admin,
          "SELECT pg_terminate_backend(?::int, ?)",
          pid,
          Math.max(1000L, (s.queryTimeoutSeconds - 1) * 1000L));
      return;
    }
    s.execute(admin, "SELECT pg_terminate_backend(?::int)", pid);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(s.queryTimeoutSeconds);
    while (System.nanoTime() - deadline < 0) {
      try (PreparedStatement ps =
          s.prepare(admin, "SELECT 1 FROM pg_stat_activity WHERE pid = ?::int")) {
        ps.setLong(1, pid);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return;
          }
        }
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the backend is exiting
    }
  }
}
