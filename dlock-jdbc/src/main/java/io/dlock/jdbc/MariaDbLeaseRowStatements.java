package io.dlock.jdbc;

import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * MariaDB 10.5+: the MySQL family's lease rows ({@link MySqlLeaseRowStatements}: its transaction,
 * release and renewal), with the attempt in one {@code INSERT ... ON DUPLICATE KEY UPDATE ...
 * RETURNING} and tokens from a sequence, where MySQL needs a read and a counter row. The
 * assignments of {@code ON DUPLICATE KEY UPDATE} apply left to right, each seeing the ones before,
 * so the order below matters: every decision reads the old expiry, which is assigned last; the hold
 * count reads the old owner too, which is assigned after it.
 *
 * <p>The fencing token is drawn only once this statement holds the row: in {@code ON DUPLICATE KEY
 * UPDATE} (which runs under the row's exclusive lock), or, for a row this statement inserted (with
 * token 0), by an update of it in the same transaction, under the insert's lock. A token drawn in
 * {@code VALUES} would be drawn before the row is locked or the duplicate found: an acquisition
 * delayed after drawing could be granted a lower token than a grant made meanwhile.
 *
 * <p>The clock is {@code UTC_TIMESTAMP(6)}, which, unlike {@code NOW()}, does not depend on the
 * session's time zone, so clients with different time zones agree on expiry; like {@code NOW()}, it
 * is the same throughout one statement.
 */
final class MariaDbLeaseRowStatements extends MySqlLeaseRowStatements {
  private static final String NOW = MySqlDialect.NOW_MILLIS;

  private final String acquire;
  private final String drawToken;

  MariaDbLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.acquire =
        """
        INSERT INTO %1$s (name, owner, holds, token, expires_at, holder, granted_at, grant_nonce)
        VALUES (?, ?, 1, 0, %2$s + ?, ?, %2$s, ?)
        ON DUPLICATE KEY UPDATE
          holder = IF(expires_at <= %2$s, VALUES(holder), holder),
          granted_at = IF(expires_at <= %2$s, VALUES(granted_at), granted_at),
          grant_nonce = IF(expires_at <= %2$s, VALUES(grant_nonce), grant_nonce),
          holds = IF(owner = VALUES(owner) AND expires_at > %2$s,
                     holds + ?,
                     IF(expires_at <= %2$s, 1, holds)),
          token = IF(expires_at <= %2$s, NEXTVAL(%1$s_fence), token),
          owner = IF(expires_at <= %2$s, VALUES(owner), owner),
          expires_at = IF(expires_at <= %2$s, VALUES(expires_at),
                          IF(owner = VALUES(owner), GREATEST(expires_at, VALUES(expires_at)),
                             expires_at))
        RETURNING owner, holds, token, expires_at - %2$s, grant_nonce
        """
            .formatted(table, NOW);
    // Draws and reads in one statement: the row this transaction inserted (and holds locked) is
    // always the duplicate here, so nothing is ever inserted by it that the transaction keeps.
    this.drawToken =
        """
        INSERT INTO %1$s (name, owner, holds, token, expires_at) VALUES (?, '', 0, 0, 0)
        ON DUPLICATE KEY UPDATE token = IF(token = 0, NEXTVAL(%1$s_fence), token)
        RETURNING token
        """
            .formatted(table);
  }

  @Override
  String dialect() {
    return MariaDbDialect.NAME;
  }

  @Override
  String schemaResource() {
    return "io/dlock/jdbc/schema/mariadb.sql";
  }

  @Override
  String probeSequence() {
    // Draws one value, as acquisition does, so the same privilege is checked (a gap is harmless).
    return "SELECT NEXTVAL(" + table + "_fence)";
  }

  @Override
  String fenceObject() {
    return "the sequence " + table + "_fence";
  }

  @Override
  String fencePrivilege() {
    return "USAGE (or SELECT)";
  }

  @Override
  Optional<LockInfo> forceRelease(Connection c, String name) throws SQLException {
    return forceReleaseByToken(c, name); // every committed grant has its token
  }

  @Override
  String foreignCounter() {
    return MySqlFences.tableOf(table); // the MySQL dialect's counter rows
  }

  /**
   * The upsert, and for a new row the draw: four round trips with the transaction's (autocommit
   * off, the upsert, for a new row the draw, autocommit on, which commits), so that a grant over a
   * slow network still arrives within its lease: six, with a separate commit and a draw and read
   * apart, made grants arrive after a 2 s lease at 200 ms each way (the fault suite's {@code delay}
   * scenario).
   */
  @Override
  Attempt attempt(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    // The nonce names a grant this statement makes (an insert or a takeover), so that one whose
    // commit is answered by a lost connection can be undone exactly (see acquire).
    long nonce = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    try (PreparedStatement ps = prepare(c, acquire)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, leaseMillis);
      ps.setString(4, holder);
      ps.setLong(5, nonce);
      ps.setInt(6, countsHolds ? 1 : 0); // an owner id re-enters, a grant owner repeats
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return new Done(new AcquireResult.Held(Duration.ZERO), 0);
        }
        if (!owner.equals(rs.getString(1))) {
          return new Done(new AcquireResult.Held(Duration.ofMillis(Math.max(0, rs.getLong(4)))), 0);
        }
        long token = rs.getLong(3);
        int holds = rs.getInt(2);
        long made = rs.getLong(5) == nonce ? nonce : 0;
        return new Done(
            new AcquireResult.Granted(token != 0 ? token : drawToken(c, name), holds), made);
      }
    }
  }

  /** Draws the token of a row this transaction inserted, which it holds locked. */
  private long drawToken(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, drawToken)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getLong(1) == 0) {
          throw new SQLException("the lease row of '" + name + "' vanished inside its insert");
        }
        return rs.getLong(1);
      }
    }
  }
}
