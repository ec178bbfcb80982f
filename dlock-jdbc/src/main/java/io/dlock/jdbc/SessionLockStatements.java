package io.dlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Session locks: PostgreSQL advisory locks and MariaDB {@code GET_LOCK}, taken and recorded in one
 * statement on the holder's dedicated connection, so one round trip per grant.
 *
 * <p>Keys: PostgreSQL takes a 64-bit key, the first 8 bytes of SHA-256 of the name. Two names with
 * one key would exclude each other; {@code <table>_held.lock_key} is unique, so the second name to
 * be granted fails with an error naming both instead of silently sharing a lock. MariaDB takes a
 * string of at most 64 characters, shared by the whole server: {@code <table>:<name>} when that
 * fits, else {@code <table>:#} and the hex SHA-256 of the name cut to 64 characters (at least 56
 * bits with the longest table name of 48 characters; 208 with the default one); a collision is
 * reported the same way.
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
}
