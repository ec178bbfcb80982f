package io.dlock.jdbc;

import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Lease rows on MySQL 8 (and unchanged on MariaDB). One autocommit {@code INSERT ... ON DUPLICATE
 * KEY UPDATE} decides an attempt under the row's lock and says how with {@code
 * LAST_INSERT_ID(expr)} (see {@link #acquire}). A row taken over (or inserted) holds token 0, "not
 * drawn yet", and the attempt's random grant nonce; the token is then drawn ({@link MySqlFences})
 * and written in autocommit, only if the row is still that grant's (same nonce, token 0, unexpired
 * by the database's clock).
 *
 * <p>Why the draw comes after the upsert, not in one transaction with it: a draw locks its counter
 * row, which 1/1,024 of all names share, until the draw's transaction ends; inside the lease row's
 * transaction a client stalled before its commit would hold up new grants of all those names. Why
 * tokens still follow the grants: a grant's draw happens after its takeover and before its token
 * write, which needs the grant unexpired; the next grant of the name takes the row over only after
 * that expiry or a release (which needs the token), so it draws later, and higher. A token drawn
 * before the row is taken would not follow the grants: an acquisition delayed after drawing could
 * be granted a lower token than a grant made meanwhile.
 *
 * <p>Calls of one grant (an owner id re-entering while the token is not written yet) each draw, and
 * the first write wins: the others read its token back. A grant whose lease ends before its token
 * is written is not granted (the caller hears the lock is held, and asks again).
 *
 * <p>MySQL and MariaDB apply the assignments of {@code ON DUPLICATE KEY UPDATE} left to right, each
 * seeing the ones before, so the order below matters: every decision reads the old expiry, which is
 * assigned last; the hold count reads the old owner too, which is assigned after it. Values are
 * bound again as parameters rather than read with {@code VALUES()}, which MySQL 8.0.20 deprecated.
 *
 * <p>Round trips: 1 for a refusal, 3 for a new grant (the upsert, the draw, the token's write), 2
 * for a re-entry (the upsert, a read of the grant's token), 4 into a grant whose token is not
 * written yet; the same on MariaDB ({@link MariaDbLeaseRowStatements} draws from a sequence). The
 * clock is {@code UTC_TIMESTAMP(6)}, the same throughout one statement and independent of the
 * session's time zone.
 */
class MySqlLeaseRowStatements extends LockStatements {
  private static final String NOW = MySqlDialect.NOW_MILLIS;

  private final String describeGrant;
  private final String deleteByNonce;
  private final MySqlFences fences;
  private final MySqlLeaseRowAcquisition acquisition;

  MySqlLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.describeGrant =
        "SELECT name, holder, token, holds, granted_at, expires_at - "
            + NOW
            + ", grant_nonce FROM "
            + table
            + " WHERE name = ? AND expires_at > "
            + NOW;
    this.deleteByNonce = "DELETE FROM " + table + " WHERE name = ? AND grant_nonce = ?";
    this.fences = new MySqlFences(table, queryTimeoutSeconds);
    this.acquisition = new MySqlLeaseRowAcquisition(table, queryTimeoutSeconds, this::draw);
  }

  /**
   * Deletes the grant that holds {@code name} now, named by its nonce rather than its token: a
   * grant between its commit and its token's write has token 0, which every such grant shares, and
   * an operator must be able to break it too (found by review: it was refused, "nobody held it",
   * while inspection listed it). Its acquisition then finds its row gone and hears the lock is
   * held.
   */
  @Override
  Optional<LockInfo> forceRelease(Connection c, String name) throws SQLException {
    for (int round = 0; round < 3; round++) {
      LockInfo before;
      long nonce;
      try (PreparedStatement ps = prepare(c, describeGrant)) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Optional.empty();
          }
          before = info(rs, true);
          nonce = rs.getLong(7); // every grant of this dialect writes one
        }
      }
      try (PreparedStatement ps = prepare(c, deleteByNonce)) {
        MySqlLeaseRowAcquisition.bindAll(ps, name, nonce);
        if (ps.executeUpdate() == 1) {
          return Optional.of(before);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Also refuses tables whose names, owners or session keys have a collation that does not compare
   * them exactly: a PAD SPACE one (such as {@code utf8mb4_bin}: "a" and "a " one key, so two locks
   * would be one), one that ignores case, or one that cannot store every character (without strict
   * SQL modes such characters are converted, and two names become one). Columns of a binary type
   * (no collation, as the MySQL DDL has) and {@code utf8mb4_nopad_bin} (MariaDB's DDL) or {@code
   * utf8mb4_0900_bin} (MySQL 8's NO PAD binary collation) pass. In both dialects: the MySQL one
   * runs on hand-made MySQL 8 tables and on MariaDB (found by review).
   */
  @Override
  void probe(Connection c) throws SQLException, SchemaProblem {
    super.probe(c);
    try (PreparedStatement ps =
        prepare(
            c,
            "SELECT TABLE_NAME, COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND LOWER(TABLE_NAME) IN (LOWER(?), LOWER(?),"
                + " LOWER(?)) AND COLUMN_NAME IN ('name', 'owner', 'lock_key')"
                + " AND COLLATION_NAME IS NOT NULL"
                + " AND COLLATION_NAME NOT IN ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin')"
                + " ORDER BY TABLE_NAME, COLUMN_NAME")) {
      ps.setString(1, table);
      ps.setString(2, table + "_held");
      ps.setString(3, table + "_rows");
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          throw new SchemaProblem(
              "the column "
                  + rs.getString(1)
                  + "."
                  + rs.getString(2)
                  + " has the collation "
                  + rs.getString(3)
                  + ", which does not compare names exactly (it ignores trailing spaces or case,"
                  + " or cannot store every character: two locks would be one): it needs a"
                  + " binary type, utf8mb4_nopad_bin (MariaDB) or utf8mb4_0900_bin (MySQL 8), as"
                  + " in "
                  + schemaResource()
                  + "; recreate the tables with that DDL, or ALTER their name, owner and"
                  + " lock_key columns",
              null,
              false);
        }
      }
    }
  }

  /**
   * Asked of information_schema, which answers without an error packet for a missing table. Not
   * "missing" beside the other dialect's counter: the probe must refuse that table, before anything
   * is created next to it.
   */
  @Override
  boolean surelyMissing(Connection c) throws SQLException {
    String foreign = foreignCounter();
    return !tableExists(c, table) && (foreign == null || !tableExists(c, foreign));
  }

  @Override
  String probeColumns() {
    return super.probeColumns() + ", grant_nonce";
  }

  @Override
  String dialect() {
    return MySqlDialect.NAME;
  }

  @Override
  String nowMillis() {
    return NOW;
  }

  @Override
  String schemaResource() {
    return "io/dlock/jdbc/schema/mysql.sql";
  }

  @Override
  String probeSequence() {
    return "UPDATE " + MySqlFences.tableOf(table) + " SET v = v WHERE 1 = 0";
  }

  @Override
  String fenceObject() {
    return "the counter table " + MySqlFences.tableOf(table);
  }

  @Override
  String fencePrivilege() {
    return "SELECT, INSERT, UPDATE";
  }

  @Override
  @Nullable String foreignCounter() {
    return table + "_fence"; // MariaDB's sequence
  }

  /** See {@link MySqlLeaseRowAcquisition}. */
  @Override
  AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    return acquisition.acquire(c, name, owner, countsHolds, holder, leaseMillis);
  }

  /**
   * Draws the next fencing token of {@code name} in autocommit, one statement: from the counter
   * rows ({@link MySqlFences}), which MySQL needs for want of sequences.
   */
  long draw(Connection c, String name) throws SQLException {
    return fences.drawCommitted(c, name);
  }
}
