package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/** MariaDB: {@code GET_LOCK(key, 0)}; no release signals (the core backs off). */
final class MariaDbSessionLockStatements extends SessionLockStatements {
  private static final int MAX_KEY = 64;
  private final String lock;

  MariaDbSessionLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout, MariaDbDialect.NOW_MILLIS);
    // A live record of another grant refuses before the lock is tried (see
    // PostgresSessionLockStatements).
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
        MariaDbDialect.boundIdle(this, c, idleMillis);
        return granted;
      }
    }
  }

  @Override
  void raiseBounds(Connection c, long horizonMillis) throws SQLException {
    MariaDbDialect.boundIdle(this, c, horizonMillis);
  }

  @Override
  void unlock(Connection c, String name, String owner, long token) throws SQLException {
    clearRecord(c, name, token); // first: the lock stays taken until the record is cleared
    execute(c, "SELECT RELEASE_LOCK(?)", key(name));
  }

  @Override
  void unbound(Connection c) throws SQLException {
    MariaDbDialect.resetIdle(this, c);
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
