package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * MariaDB: the MySQL family's session locks ({@link MySqlSessionLockStatements}) taken, with the
 * token drawn from the sequence and the grant recorded, in one statement instead of three.
 */
final class MariaDbSessionLockStatements extends MySqlSessionLockStatements {
  private final String lock;

  MariaDbSessionLockStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
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

  /**
   * {@code <table>:<name>} when that fits in 64 characters (MariaDB compares lock names exactly),
   * else the hashed key.
   */
  @Override
  String key(String name) {
    String plain = table + ":" + name;
    return plain.length() <= MAX_KEY ? plain : hashedKey(name);
  }

  @Override
  @Nullable Granted lock(
      Connection c, String name, String owner, String holder, long leaseMillis, long idleMillis)
      throws SQLException {
    String key = key(name);
    for (int tries = 1; ; tries++) {
      try {
        return lockOnce(c, name, key, owner, holder, leaseMillis, idleMillis);
      } catch (SQLException e) {
        // InnoDB chose the statement as a deadlock's victim (concurrent grants of names whose
        // records share a gap, under load: CI saw it) and rolled back its insert, but not its
        // GET_LOCK, which is not transactional: give the lock back, then try again. Thrown
        // instead, it failed a waiting acquisition with BackendUnavailableException.
        if (tries >= 3 || !MySqlLeaseRowAcquisition.deadlockVictim(e)) {
          throw e;
        }
        execute(c, "SELECT RELEASE_LOCK(?)", key); // this session's, if it got it; else nothing
      }
    }
  }

  private @Nullable Granted lockOnce(
      Connection c,
      String name,
      String key,
      String owner,
      String holder,
      long leaseMillis,
      long idleMillis)
      throws SQLException {
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
        MySqlDialect.boundIdle(this, c, idleMillis);
        return granted;
      }
    }
  }
}
