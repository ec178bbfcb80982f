package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** PostgreSQL: {@code pg_try_advisory_lock(bigint)}; waiters are woken by NOTIFY on unlock. */
final class PostgresSessionLockStatements extends SessionLockStatements {
  private final String channel;
  private final int majorVersion;
  private final String lock;

  private final String unlock;
  private final String idle;

  PostgresSessionLockStatements(
      String table, Duration statementTimeout, String channel, int majorVersion) {
    super(table, statementTimeout, PostgresDialect.NOW_MILLIS);
    this.channel = channel;
    this.majorVersion = majorVersion;
    // Before PostgreSQL 14 there is no idle_session_timeout: a custom setting stands in for it
    // (harmless), and only TCP keepalive bounds a silent holder there.
    this.idle = majorVersion >= 14 ? "idle_session_timeout" : "dlock.idle_session_timeout";
    // The record is cleared in the same statement (it commits as the statement ends; a waiter
    // that finds it live before then is woken again by the NOTIFY, sent at the commit).
    this.unlock =
        "WITH r AS (UPDATE "
            + held
            + " SET owner = NULL WHERE name = ? AND token = ? RETURNING 1)"
            + " SELECT pg_advisory_unlock(?), pg_notify(?, ?)";
    // A live record of another grant refuses before the lock is tried (CASE orders the two): its
    // holder may still trust a lock that the server freed with its session. RETURNING runs only
    // for a grant: only a granted session gets its bounds.
    this.lock =
        """
        WITH n AS (SELECT %2$s AS now_ms)
        INSERT INTO %1$s AS h
          (name, lock_key, owner, token, holder, granted_at, expires_at, session_id)
        SELECT ?, ?, ?, nextval('%3$s_fence'), ?, n.now_ms, n.now_ms + ?, pg_backend_pid() FROM n
         WHERE CASE WHEN EXISTS (SELECT 1 FROM %1$s r WHERE r.name = ? AND %5$s) THEN false
                    ELSE pg_try_advisory_lock(?) END
        ON CONFLICT (name) DO UPDATE SET lock_key = EXCLUDED.lock_key, owner = EXCLUDED.owner,
          token = EXCLUDED.token, holder = EXCLUDED.holder, granted_at = EXCLUDED.granted_at,
          expires_at = EXCLUDED.expires_at, session_id = EXCLUDED.session_id
        RETURNING token, session_id %4$s
        """
            .formatted(held, now, table, PostgresDialect.boundsColumn(idle), liveRecord("r"));
  }

  /**
   * Clears the record and sends {@code NOTIFY} in one statement, for a forced release and a grant
   * found gone: the holder's own unlock notifies in its statement already.
   */
  @Override
  void clearRecord(Connection c, String name, long token) throws SQLException {
    execute(c, PostgresDialect.clearRecordAndNotifySql(held), name, token, channel, name);
  }

  static long key(String name) {
    byte[] hash = sha256(name);
    long key = 0;
    for (int i = 0; i < 8; i++) {
      key = (key << 8) | (hash[i] & 0xff);
    }
    return key;
  }

  @Override
  @Nullable Granted lock(
      Connection c, String name, String owner, String holder, long leaseMillis, long idleMillis)
      throws SQLException {
    long key = key(name);
    try (PreparedStatement ps = prepare(c, lock)) {
      bind(
          ps,
          name,
          Long.toString(key),
          owner,
          holder,
          leaseMillis,
          name,
          key,
          Long.toString(idleMillis));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Granted(rs.getLong(1), rs.getLong(2)) : null;
      }
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState())) {
        throw e;
      }
      // Another name has this key in the record: undo the lock (a session lock outlives the
      // failed statement) and refuse.
      execute(c, "SELECT pg_advisory_unlock(?)", key);
      throw collision(name, nameWithKey(c, Long.toString(key)), Long.toString(key));
    }
  }

  @Override
  void unlock(Connection c, String name, String owner, long token) throws SQLException {
    execute(c, unlock, name, token, key(name), channel, name);
  }

  @Override
  void raiseBounds(Connection c, long horizonMillis) throws SQLException {
    PostgresDialect.raiseBounds(this, c, idle, horizonMillis);
  }

  @Override
  void unbound(Connection c) throws SQLException {
    PostgresDialect.resetBounds(this, c, idle);
  }

  @Override
  String inspectSql(boolean exactName) {
    return """
        SELECT h.name, h.holder, h.token, 1, h.granted_at, h.expires_at - %2$s, h.session_id
          FROM %1$s h
          JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.pid = h.session_id
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND ((l.classid::bigint << 32) | l.objid::bigint)::text = h.lock_key
         WHERE h.lock_key IS NOT NULL AND %3$s
         ORDER BY h.name
        """
        .formatted(held, now, exactName ? "h.name = ?" : "h.name LIKE ? ESCAPE '!'");
  }

  @Override
  void endSession(Connection admin, String name, long sessionId) throws SQLException {
    PostgresDialect.terminate(this, admin, sessionId, majorVersion);
  }
}
