package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * MariaDB 10.5+: acquisition is one {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}. MySQL
 * and MariaDB apply the assignments of {@code ON DUPLICATE KEY UPDATE} left to right, each seeing
 * the ones before, so the order below matters: every decision reads the old expiry, which is
 * assigned last; the hold count reads the old owner too, which is assigned after it.
 *
 * <p>The fencing token is drawn only once this statement holds the row: in {@code ON DUPLICATE KEY
 * UPDATE} (which runs under the row's exclusive lock), or, for a row this statement inserted (with
 * token 0), by a second statement once the row is this owner's ({@link #acquire}). A token drawn in
 * {@code VALUES} would be drawn before the row is locked or the duplicate found: an acquisition
 * delayed after drawing could be granted a lower token than a grant made meanwhile.
 *
 * <p>The clock is {@code UTC_TIMESTAMP(6)}, which, unlike {@code NOW()}, does not depend on the
 * session's time zone, so clients with different time zones agree on expiry; like {@code NOW()}, it
 * is the same throughout one statement.
 */
final class MariaDbLeaseRowStatements extends LockStatements {
  private static final String NOW = MariaDbDialect.NOW_MILLIS;

  private final String acquire;
  private final String drawToken;
  private final String readToken;

  MariaDbLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.acquire =
        """
        INSERT INTO %1$s (name, owner, holds, token, expires_at, holder, granted_at)
        VALUES (?, ?, 1, 0, %2$s + ?, ?, %2$s)
        ON DUPLICATE KEY UPDATE
          holder = IF(expires_at <= %2$s, VALUES(holder), holder),
          granted_at = IF(expires_at <= %2$s, VALUES(granted_at), granted_at),
          holds = IF(owner = VALUES(owner) AND expires_at > %2$s,
                     holds + IF(LEFT(owner, 2) = 'o:', 1, 0),
                     IF(expires_at <= %2$s, 1, holds)),
          token = IF(expires_at <= %2$s, NEXTVAL(%1$s_fence), token),
          owner = IF(expires_at <= %2$s, VALUES(owner), owner),
          expires_at = IF(expires_at <= %2$s, VALUES(expires_at),
                          IF(owner = VALUES(owner), GREATEST(expires_at, VALUES(expires_at)),
                             expires_at))
        RETURNING owner, holds, token, expires_at - %2$s
        """
            .formatted(table, NOW);
    this.drawToken =
        "UPDATE "
            + table
            + " SET token = NEXTVAL("
            + table
            + "_fence) WHERE name = ? AND owner = ? AND token = 0";
    this.readToken = "SELECT token FROM " + table + " WHERE name = ? AND owner = ?";
  }

  @Override
  String dialect() {
    return MariaDbDialect.NAME;
  }

  @Override
  String nowMillis() {
    return NOW;
  }

  @Override
  String schemaResource() {
    return "io/dlock/jdbc/schema/mariadb-v1.sql";
  }

  @Override
  String probeSequence() {
    // Draws one value, as acquisition does, so the same privilege is checked (a gap is harmless).
    return "SELECT NEXTVAL(" + table + "_fence)";
  }

  /**
   * One statement, in autocommit, takes the row or finds it held. A row it inserted has token 0
   * until a second statement draws the token under the row's lock: the row is this owner's from the
   * insert on, so no other grant of the lock can draw a token in between, and tokens follow the
   * order of the grants. Two statements in autocommit, not a transaction: an explicit one cost four
   * more round trips (autocommit off and on, the commit, a read), which with a slow network made a
   * grant arrive after its lease (the fault suite's {@code delay} scenario). Should the client fail
   * between the two, the row keeps token 0 and the lock until its lease ends, as a dead holder's
   * would; another client of the same owner id draws the token itself (only a row with token 0 is
   * drawn for, so a token is drawn once).
   */
  @Override
  AcquireResult acquire(Connection c, String name, String owner, String holder, long leaseMillis)
      throws SQLException {
    int holds;
    try (PreparedStatement ps = prepare(c, acquire)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, leaseMillis);
      ps.setString(4, holder);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return new AcquireResult.Held(Duration.ZERO);
        }
        if (!owner.equals(rs.getString(1))) {
          return new AcquireResult.Held(Duration.ofMillis(Math.max(0, rs.getLong(4))));
        }
        long token = rs.getLong(3);
        holds = rs.getInt(2);
        if (token != 0) {
          return new AcquireResult.Granted(token, holds);
        }
      }
    }
    long token = drawToken(c, name, owner);
    // 0: the row is gone or another owner's (forced release, or a lease that ended in between).
    return token != 0
        ? new AcquireResult.Granted(token, holds)
        : new AcquireResult.Held(Duration.ZERO);
  }

  /** Draws the token of this owner's row if none is drawn yet, and reads it; 0 if not its row. */
  private long drawToken(Connection c, String name, String owner) throws SQLException {
    try (PreparedStatement ps = prepare(c, drawToken)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = prepare(c, readToken)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }
}
