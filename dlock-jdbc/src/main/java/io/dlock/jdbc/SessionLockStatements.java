package io.dlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Session locks: PostgreSQL advisory locks and MariaDB {@code GET_LOCK}, taken and recorded in one
 * statement on the holder's dedicated connection, so one round trip per grant.
 *
 * <p>Keys: PostgreSQL takes a 64-bit key, the first 8 bytes of SHA-256 of the name. Two names with
 * one key would exclude each other; {@code <table>_held.lock_key} is unique, so the second name to
 * be granted fails with an error naming both instead of silently sharing a lock. MariaDB takes a
 * string of at most 64 characters, shared by the whole server: {@code <table>:<name>} when that
 * fits, else {@code <table>:#} and the hex SHA-256 of the name cut to 64 characters (at least 60
 * bits; 208 with the default table name); a collision is reported the same way.
 */
abstract class SessionLockStatements extends HeldLockStatements {

  SessionLockStatements(String table, Duration statementTimeout, String nowMillis) {
    super(table, statementTimeout, nowMillis);
  }

  @Override
  String mode() {
    return "session";
  }

  @Override
  List<String> probes() {
    return List.of(
        "SELECT name, lock_key, owner, token, holder, granted_at, expires_at, session_id FROM "
            + held
            + " WHERE 1 = 0",
        "UPDATE " + held + " SET token = token WHERE 1 = 0");
  }

  @Override
  void heartbeat(Connection c, String name, String owner, long token, long leaseMillis)
      throws SQLException {
    // The statement succeeds only on a live connection, whose session still holds the lock. It
    // names the grant's token, so that it never touches the record of a later grant; a record
    // that is no longer the grant's (an operator's forced release cleared it) ends the grant.
    if (!moveRecord(c, name, owner, token, leaseMillis)) {
      throw new SQLException(
          "the record of the grant of '" + name + "' (token " + token + ") was cleared", "08003");
    }
  }

  static byte[] sha256(String name) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  static IllegalStateException collision(String name, @Nullable String other, String key) {
    return new IllegalStateException(
        "lock name '"
            + name
            + "' has the same session lock key ("
            + key
            + ") as '"
            + other
            + "', which holds it in the lock table's record; the two names would exclude each"
            + " other, so this grant was refused: rename one of them (see docs/jdbc.md, hash"
            + " collisions)");
  }

  @Nullable String nameWithKey(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = prepare(c, "SELECT name FROM " + held + " WHERE lock_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** PostgreSQL: {@code pg_try_advisory_lock(bigint)}; waiters are woken by NOTIFY on unlock. */
  static final class Postgres extends SessionLockStatements {
    private final String channel;
    private final int majorVersion;
    private final String lock;

    private final String unlock;
    private final String idle;

    Postgres(String table, Duration statementTimeout, String channel, int majorVersion) {
      super(table, statementTimeout, "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint");
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
              .formatted(held, now, table, pgBounds(idle), liveRecord("r"));
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
      pgRaiseBounds(c, idle, horizonMillis);
    }

    @Override
    void unbound(Connection c) throws SQLException {
      try (java.sql.Statement st = c.createStatement()) {
        st.setQueryTimeout(queryTimeoutSeconds);
        st.execute(pgResets(idle).substring(2));
      }
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
      terminate(this, admin, sessionId, majorVersion);
    }

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

  /** MariaDB: {@code GET_LOCK(key, 0)}; no release signals (the core backs off). */
  static final class MariaDb extends SessionLockStatements {
    private static final int MAX_KEY = 64;
    private final String lock;

    MariaDb(String table, Duration statementTimeout) {
      super(
          table,
          statementTimeout,
          "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)");
      // A live record of another grant refuses before the lock is tried (see Postgres).
      // ON DUPLICATE KEY UPDATE fires on either unique key: every assignment is guarded by the
      // name, so a lock_key collision leaves the other name's record alone and shows in RETURNING.
      this.lock =
          """
          INSERT INTO %1$s (name, lock_key, owner, token, holder, granted_at, expires_at, session_id)
          SELECT ?, ?, ?, NEXTVAL(%3$s_fence), ?, %2$s, %2$s + ?, CONNECTION_ID() FROM DUAL
           WHERE IF(EXISTS (SELECT 1 FROM %1$s r WHERE r.name = ? AND %4$s), 0, GET_LOCK(?, 0)) = 1
          ON DUPLICATE KEY UPDATE
            lock_key = IF(name = VALUES(name), VALUES(lock_key), lock_key),
            owner = IF(name = VALUES(name), VALUES(owner), owner),
            token = IF(name = VALUES(name), VALUES(token), token),
            holder = IF(name = VALUES(name), VALUES(holder), holder),
            granted_at = IF(name = VALUES(name), VALUES(granted_at), granted_at),
            expires_at = IF(name = VALUES(name), VALUES(expires_at), expires_at),
            session_id = IF(name = VALUES(name), VALUES(session_id), session_id)
          RETURNING name, token, session_id
          """
              .formatted(held, now, table, liveRecord("r"));
    }

    String key(String name) {
      String plain = table + ":" + name;
      if (plain.length() <= MAX_KEY) {
        return plain;
      }
      String hashed = table + ":#" + HexFormat.of().formatHex(sha256(name));
      return hashed.substring(0, MAX_KEY);
    }

    @Override
    @Nullable Granted lock(
        Connection c, String name, String owner, String holder, long leaseMillis, long idleMillis)
        throws SQLException {
      String key = key(name);
      try (PreparedStatement ps = prepare(c, lock)) {
        bind(ps, name, key, owner, holder, leaseMillis, name, key);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return null;
          }
          String recorded = rs.getString(1);
          if (!name.equals(recorded)) {
            execute(c, "SELECT RELEASE_LOCK(?)", key);
            throw collision(name, recorded, key);
          }
          Granted granted = new Granted(rs.getLong(2), rs.getLong(3));
          // The server closes the connection once it idled past the lease and the margin, which
          // frees the lock: a holder that hangs or went silent holds it no longer than that.
          execute(c, "SET SESSION wait_timeout = ?", mariaDbIdleSeconds(idleMillis));
          return granted;
        }
      }
    }

    @Override
    void raiseBounds(Connection c, long horizonMillis) throws SQLException {
      execute(c, "SET SESSION wait_timeout = ?", mariaDbIdleSeconds(horizonMillis));
    }

    @Override
    void unlock(Connection c, String name, String owner, long token) throws SQLException {
      clearRecord(c, name, token); // first: the lock stays taken until the record is cleared
      execute(c, "SELECT RELEASE_LOCK(?)", key(name));
    }

    @Override
    void unbound(Connection c) throws SQLException {
      execute(c, "SET SESSION wait_timeout = DEFAULT");
    }

    @Override
    String inspectSql(boolean exactName) {
      return ("SELECT name, holder, token, 1, granted_at, expires_at - %2$s, session_id FROM %1$s"
              + " WHERE lock_key IS NOT NULL AND %3$s AND IS_USED_LOCK(lock_key) = session_id"
              + " ORDER BY name")
          .formatted(held, now, exactName ? "name = ?" : "name LIKE ? ESCAPE '!'");
    }

    @Override
    void endSession(Connection admin, String name, long sessionId) throws SQLException {
      execute(admin, "KILL CONNECTION ?", sessionId);
      // The killed connection frees its locks as it ends: wait for that on the server.
      String key = key(name);
      try (PreparedStatement ps = prepare(admin, "SELECT GET_LOCK(?, ?)")) {
        bind(ps, key, Math.max(1, queryTimeoutSeconds - 1));
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getInt(1) == 1) {
            execute(admin, "SELECT RELEASE_LOCK(?)", key);
          }
        }
      }
    }
  }
}
