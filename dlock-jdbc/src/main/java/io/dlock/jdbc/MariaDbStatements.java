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
 * the ones before, so the order below matters: the hold count and token are decided from the old
 * owner and expiry, then the expiry, and the owner last (a new token marks a new grant).
 *
 * <p>The clock is {@code UTC_TIMESTAMP(6)}, which, unlike {@code NOW()}, does not depend on the
 * session's time zone, so clients with different time zones agree on expiry.
 */
final class MariaDbStatements extends LockStatements {
  private static final String NOW =
      "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";

  private final String acquire;

  MariaDbStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.acquire =
        """
        INSERT INTO %1$s (name, owner, holds, token, expires_at, holder, granted_at)
        VALUES (?, ?, 1, NEXTVAL(%1$s_fence), %2$s + ?, ?, %2$s)
        ON DUPLICATE KEY UPDATE
          holder = IF(expires_at <= %2$s, VALUES(holder), holder),
          granted_at = IF(expires_at <= %2$s, VALUES(granted_at), granted_at),
          holds = IF(owner = VALUES(owner) AND expires_at > %2$s,
                     holds + IF(LEFT(owner, 2) = 'o:', 1, 0),
                     IF(expires_at <= %2$s, 1, holds)),
          token = IF(expires_at <= %2$s, VALUES(token), token),
          expires_at = IF(token = VALUES(token), VALUES(expires_at),
                          IF(owner = VALUES(owner), GREATEST(expires_at, VALUES(expires_at)),
                             expires_at)),
          owner = IF(token = VALUES(token), VALUES(owner), owner)
        RETURNING owner, holds, token, expires_at - %2$s
        """
            .formatted(table, NOW);
  }

  @Override
  String dialect() {
    return "MariaDB";
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

  @Override
  AcquireResult acquire(Connection c, String name, String owner, String holder, long leaseMillis)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, acquire)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, leaseMillis);
      ps.setString(4, holder);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return new AcquireResult.Held(Duration.ZERO);
        }
        if (owner.equals(rs.getString(1))) {
          return new AcquireResult.Granted(rs.getLong(3), rs.getInt(2));
        }
        return new AcquireResult.Held(Duration.ofMillis(Math.max(0, rs.getLong(4))));
      }
    }
  }
}
