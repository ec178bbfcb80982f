package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * Session locks on MySQL 8 (and unchanged on MariaDB): {@code GET_LOCK(key, 0)} on the holder's
 * connection, in autocommit, refused while another grant's record is live (see {@link
 * HeldLockStatements}); then, holding it, the fencing token is drawn ({@link MySqlFences}) and the
 * grant recorded. Three round trips and the session bound, where MariaDB needs one and the bound
 * ({@link MariaDbSessionLockStatements}).
 *
 * <p>A record with this name's key can only be written by a holder of the key's {@code GET_LOCK}
 * (row mode records no key), so once it holds the key, the record's write finds any other name with
 * the same key: the unique {@code lock_key} refuses it, and the grant is refused with both names.
 * No release signals: the core backs off.
 */
class MySqlSessionLockStatements extends SessionLockStatements {
  static final int MAX_KEY = 64;
  private static final int DUPLICATE_KEY = 1062;

  private final String tryLock;
  private final String moveRecord;
  private final String insertRecord;
  private final MySqlFences fences;

  MySqlSessionLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout, MySqlDialect.NOW_MILLIS);
    this.tryLock =
        ("SELECT IF(EXISTS (SELECT 1 FROM %1$s r WHERE r.name = ? AND %2$s), 0, GET_LOCK(?, 0)),"
                + " CONNECTION_ID()")
            .formatted(held, liveRecord("r"));
    String grant =
        "lock_key = ?, owner = ?, token = ?, holder = ?, granted_at = %1$s, expires_at = %1$s + ?,"
            + " session_id = CONNECTION_ID()";
    this.moveRecord = ("UPDATE " + held + " SET " + grant + " WHERE name = ?").formatted(now);
    this.insertRecord =
        """
        INSERT INTO %1$s (name, lock_key, owner, token, holder, granted_at, expires_at, session_id)
        VALUES (?, ?, ?, ?, ?, %2$s, %2$s + ?, CONNECTION_ID())
        """
            .formatted(held, now);
    this.fences = new MySqlFences(table, queryTimeoutSeconds);
  }

  /**
   * The {@code GET_LOCK} key of {@code name}, shared by the whole server: {@code <table>:#} and the
   * lowercase hex SHA-256 of the name, cut to 64 characters. Always hashed: MySQL compares lock
   * names ignoring case, so "Foo" and "foo" as keys would exclude each other unseen.
   */
  String key(String name) {
    return hashedKey(name);
  }

  final String hashedKey(String name) {
    String hashed = table + ":#" + HexFormat.of().formatHex(sha256(name));
    return hashed.substring(0, Math.min(hashed.length(), MAX_KEY));
  }

  @Override
  @Nullable Granted lock(
      Connection c, String name, String owner, String holder, long leaseMillis, long idleMillis)
      throws SQLException {
    String key = key(name);
    long sessionId;
    try (PreparedStatement ps = prepare(c, tryLock)) {
      bind(ps, name, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getInt(1) != 1) {
          return null;
        }
        sessionId = rs.getLong(2);
      }
    }
    // Held: on an exception from here on, the caller discards the connection, which frees it.
    long token = fences.drawCommitted(c, name);
    try {
      writeRecord(c, name, key, owner, token, holder, leaseMillis);
    } catch (SQLException e) {
      if (e.getErrorCode() != DUPLICATE_KEY) {
        throw e;
      }
      String other = nameWithKey(c, key);
      if (name.equals(other)) {
        throw e;
      }
      execute(c, "SELECT RELEASE_LOCK(?)", key);
      throw collision(name, other, key);
    }
    // The server closes the connection once it idled past the lease and the margin, which frees
    // the lock: a holder that hangs or went silent holds it no longer than that.
    MySqlDialect.boundIdle(this, c, idleMillis);
    return new Granted(token, sessionId);
  }

  /**
   * Records the grant; a statement InnoDB chose as a deadlock's victim (records of names sharing a
   * gap, written at once under load) was rolled back and is written again: the lock stays held.
   */
  private void writeRecord(
      Connection c, String name, String key, String owner, long token, String holder, long lease)
      throws SQLException {
    for (int tries = 1; ; tries++) {
      try {
        if (update(c, moveRecord, key, owner, token, holder, lease, name) == 0) {
          update(c, insertRecord, name, key, owner, token, holder, lease);
        }
        return;
      } catch (SQLException e) {
        if (tries >= 3 || !MySqlLeaseRowAcquisition.deadlockVictim(e)) {
          throw e;
        }
      }
    }
  }

  @Override
  void raiseBounds(Connection c, long horizonMillis) throws SQLException {
    MySqlDialect.boundIdle(this, c, horizonMillis);
  }

  @Override
  void unlock(Connection c, String name, String owner, long token) throws SQLException {
    clearRecord(c, name, token); // first: the lock stays taken until the record is cleared
    execute(c, "SELECT RELEASE_LOCK(?)", key(name));
  }

  @Override
  void unbound(Connection c) throws SQLException {
    MySqlDialect.resetIdle(this, c);
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
    execute(admin, "KILL CONNECTION " + sessionId); // a number read from the server, not text
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
