package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/** PostgreSQL: lock busy is SQL state 55P03; killing a holder is {@code pg_terminate_backend}. */
final class PostgresRowLockStatements extends RowLockStatements {
  private final String channel;
  private final int majorVersion;

  PostgresRowLockStatements(
      String table, Duration statementTimeout, String channel, int majorVersion) {
    super(table, statementTimeout, PostgresDialect.NOW_MILLIS);
    this.channel = channel;
    this.majorVersion = majorVersion;
  }

  @Override
  String nextToken() {
    return "nextval('" + table + "_fence')";
  }

  /**
   * Evaluated before the row is locked; a lock that fails aborts the transaction, which undoes the
   * settings with it.
   */
  @Override
  String boundsSql() {
    return PostgresDialect.boundsColumn(IDLE);
  }

  @Override
  void unbound(Connection c) throws SQLException {
    PostgresDialect.resetBounds(this, c, IDLE); // after the commit: RESET in autocommit
  }

  private static final String IDLE = "idle_in_transaction_session_timeout";

  @Override
  void raiseBounds(Connection c, long horizonMillis) throws SQLException {
    PostgresDialect.raiseBounds(this, c, IDLE, horizonMillis);
  }

  /**
   * Clears the record and sends {@code NOTIFY} in one statement: at a release it runs inside the
   * holding transaction ({@link #clearRecordInTransaction}), delivered at the commit that frees the
   * row; after a forced release or a grant found gone, on any connection. Either way waiters of
   * other clients wake then, not at their next re-check a heartbeat interval later (lost with a
   * refactoring once; {@code PostgresReleaseSignalTest}).
   */
  @Override
  void clearRecord(Connection c, String name, long token) throws SQLException {
    execute(c, PostgresDialect.clearRecordAndNotifySql(held), name, token, channel, name);
  }

  @Override
  String sessionIdSql() {
    return "pg_backend_pid()";
  }

  @Override
  void insertRow(Connection c, String name) throws SQLException {
    // A committed row never makes ON CONFLICT wait, even while another transaction locks it.
    update(c, "INSERT INTO " + table + "_rows (name) VALUES (?) ON CONFLICT DO NOTHING", name);
  }

  @Override
  boolean busy(SQLException e) {
    return "55P03".equals(e.getSQLState());
  }

  @Override
  String insertRecordSql() {
    return insertValues() + " ON CONFLICT DO NOTHING";
  }

  @Override
  String sessionAlive() {
    return "EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.session_id)";
  }

  @Override
  void endSession(Connection admin, String name, long sessionId) throws SQLException {
    PostgresDialect.terminate(this, admin, sessionId, majorVersion);
  }
}
