package io.dlock.jdbc;

import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
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

  private final String upsert;
  private final String read;
  private final String writeToken;
  private final String undoOnlyHold;
  private final String undoOneHold;
  private final String describeGrant;
  private final String deleteByNonce;
  private final MySqlFences fences;

  MySqlLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.upsert =
        """
        INSERT INTO %1$s (name, owner, holds, token, expires_at, holder, granted_at, grant_nonce)
        VALUES (?, ?, 1, 0, %2$s + ?, ?, %2$s, LAST_INSERT_ID(?))
        ON DUPLICATE KEY UPDATE
          holder = IF(expires_at <= %2$s, ?, holder),
          granted_at = IF(expires_at <= %2$s, %2$s, granted_at),
          holds = IF(owner = ? AND expires_at > %2$s, holds + ?, IF(expires_at <= %2$s, 1, holds)),
          token = IF(expires_at <= %2$s, 0, token),
          grant_nonce = IF(expires_at <= %2$s, LAST_INSERT_ID(?),
                           IF(owner = ?, LAST_INSERT_ID(grant_nonce),
                              IF(LAST_INSERT_ID(1 + LEAST(expires_at - %2$s, %3$d)) > 0,
                                 grant_nonce, grant_nonce))),
          owner = IF(expires_at <= %2$s, ?, owner),
          expires_at = IF(expires_at <= %2$s, %2$s + ?,
                          IF(owner = ?, GREATEST(expires_at, %2$s + ?), expires_at))
        """
            .formatted(table, NOW, NONCE_FLOOR - 2);
    this.read =
        "SELECT owner, holds, token, expires_at - "
            + NOW
            + ", grant_nonce FROM "
            + table
            + " WHERE name = ?";
    this.writeToken =
        "UPDATE "
            + table
            + " SET token = ? WHERE name = ? AND grant_nonce = ? AND token = 0 AND expires_at > "
            + NOW;
    this.undoOnlyHold =
        "DELETE FROM " + table + " WHERE name = ? AND owner = ? AND grant_nonce = ? AND holds = 1";
    this.undoOneHold =
        "UPDATE "
            + table
            + " SET holds = holds - 1 WHERE name = ? AND owner = ? AND grant_nonce = ? AND holds > 1";
    this.describeGrant =
        "SELECT name, holder, token, holds, granted_at, expires_at - "
            + NOW
            + ", grant_nonce FROM "
            + table
            + " WHERE name = ? AND expires_at > "
            + NOW;
    this.deleteByNonce = "DELETE FROM " + table + " WHERE name = ? AND grant_nonce = ?";
    this.fences = new MySqlFences(table, queryTimeoutSeconds);
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
        bindAll(ps, name, nonce);
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

  /**
   * The smallest grant nonce: the upsert's answer below it is a refusal (one more than the holder's
   * remaining lease in milliseconds, capped), at or above it a grant's nonce.
   */
  static final long NONCE_FLOOR = 1L << 32;

  /** A new grant nonce, from {@link #NONCE_FLOOR} up: random, so a grant is named exactly. */
  static long newNonce() {
    return ThreadLocalRandom.current().nextLong(NONCE_FLOOR, Long.MAX_VALUE);
  }

  /**
   * A grant whose token may not be written yet: one this attempt made, or one of its owner id it
   * re-entered (a hold counted in the row).
   *
   * @param madeHere whether this attempt made the grant (the row's nonce is its own)
   */
  record Undrawn(long nonce, int holds, boolean madeHere) {}

  /**
   * One autocommit upsert decides, and its {@code LAST_INSERT_ID(expr)}, which the server sends
   * back with the statement's answer (JDBC's generated keys), says how: this call's nonce for a
   * grant it made (an insert, through {@code VALUES}, or a takeover of an expired row), the grant's
   * nonce for a re-entry of an owner id (or a repeat of a grant owner), or one more than the
   * holder's remaining lease in milliseconds for a lock held by another. The last evaluated {@code
   * LAST_INSERT_ID(expr)} is the statement's, so the update's overrides the one in {@code VALUES}
   * when the row exists.
   *
   * <p>Why not a transaction with a read back: that was six round trips to a new grant, and at 200
   * ms each way (the fault suite's {@code delay} scenario) every grant arrived after its 2 s lease
   * and was undone: the lock went to nobody while the delay lasted. Here it is three. A refusal is
   * one statement, which holds the row's lock only while it runs, so it never delays the holder's
   * release.
   */
  @Override
  AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    long nonce = newNonce();
    long outcome;
    for (int tries = 1; ; tries++) {
      try {
        outcome = upsert(c, name, owner, countsHolds, holder, leaseMillis, nonce);
        break;
      } catch (SQLException e) {
        // InnoDB picked the statement as a deadlock's victim (concurrent upserts of one name under
        // load) and rolled it back: nothing was granted, and the same statement again is safe.
        if (tries < 3 && deadlockVictim(e)) {
          continue;
        }
        if (connectionFailed(e)) {
          // The upsert was sent and its answer lost with the connection: it may have made a grant,
          // which nobody would hear of. Left, it would block the name for its lease. Undone on
          // another connection by this call's nonce: nothing if it made none. A re-entry lost so
          // is left: one hold too many, which ends with the lease.
          throw new GrantToUndo(e, other -> undoOnce(other, name, owner, nonce));
        }
        throw e;
      }
    }
    if (outcome < NONCE_FLOOR) {
      if (outcome <= 0) {
        // Every path of the upsert names its outcome; none came back. It may have made a grant.
        SQLException e =
            new SQLException("the lease row upsert of '" + name + "' returned no outcome");
        undo(c, name, owner, nonce, e);
        throw e;
      }
      return new AcquireResult.Held(Duration.ofMillis(outcome - 1));
    }
    Undrawn grant;
    if (outcome == nonce) {
      grant = new Undrawn(nonce, 1, true);
    } else {
      Row row = read(c, name);
      if (row == null || row.nonce() != outcome || !owner.equals(row.owner())) {
        // The grant re-entered ended (its lease, a forced release) before this read, and the hold
        // counted in it with it: held, ask again.
        return new AcquireResult.Held(Duration.ZERO);
      }
      if (row.token() != 0) {
        return new AcquireResult.Granted(row.token(), row.holds());
      }
      grant = new Undrawn(outcome, row.holds(), false);
    }
    try {
      return drawToken(c, name, owner, grant);
    } catch (SQLException e) {
      // The grant (or this hold of it) is in the row and nobody will hear of it: undo it, or it
      // would block the name (or keep a hold of an owner id) until its lease ends. On a connection
      // that died (the likeliest cause here) nothing more reaches the server: the caller runs the
      // undo on another connection, once. On a live one it runs here, once: run again elsewhere
      // after an answer lost, an owner id's "one hold less" would take a hold of another caller.
      long grantNonce = grant.nonce();
      if (connectionFailed(e)) {
        throw new GrantToUndo(e, other -> undoOnce(other, name, owner, grantNonce));
      }
      undo(c, name, owner, grantNonce, e);
      throw e;
    }
  }

  /** Runs the upsert in autocommit; returns its outcome (see {@link #acquire}). */
  private long upsert(
      Connection c,
      String name,
      String owner,
      boolean countsHolds,
      String holder,
      long leaseMillis,
      long nonce)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(upsert, Statement.RETURN_GENERATED_KEYS)) {
      ps.setQueryTimeout(queryTimeoutSeconds);
      bindAll(
          ps,
          name,
          owner,
          leaseMillis,
          holder,
          nonce,
          holder,
          owner,
          countsHolds ? 1 : 0, // an owner id re-enters, a grant owner repeats
          nonce,
          owner,
          owner,
          leaseMillis,
          owner,
          leaseMillis);
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (keys.next()) {
          return keys.getLong(1);
        }
      }
    }
    // A driver that did not pass the value on: the session remembers the statement's last one.
    try (PreparedStatement ps = prepare(c, "SELECT LAST_INSERT_ID()")) {
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  /**
   * Undoes the grant {@code nonce} (whether or not its token got written) on {@code c}. Best
   * effort: on failure the grant ends with its lease, and {@code cause} (which the caller reports)
   * records why.
   */
  void undo(Connection c, String name, String owner, long nonce, SQLException cause) {
    try {
      undoOnce(c, name, owner, nonce);
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /** InnoDB's deadlock victim (error 1213, SQLState 40001): its transaction was rolled back. */
  static boolean deadlockVictim(SQLException e) {
    return e.getErrorCode() == 1213 || "40001".equals(e.getSQLState());
  }

  /** A connection exception (SQLState class 08): the connection is gone. */
  static boolean connectionFailed(SQLException e) {
    String state = e.getSQLState();
    return e instanceof java.sql.SQLNonTransientConnectionException
        || (state != null && state.startsWith("08"));
  }

  /**
   * Deletes the row of grant {@code nonce} if this was its only hold, else takes this hold back.
   * The nonce names the grant, so a later grant of the name (after a forced release, or an expiry)
   * is never touched.
   */
  void undoOnce(Connection c, String name, String owner, long nonce) throws SQLException {
    try (PreparedStatement ps = prepare(c, undoOnlyHold)) {
      bindAll(ps, name, owner, nonce);
      if (ps.executeUpdate() == 1) {
        return;
      }
    }
    try (PreparedStatement ps = prepare(c, undoOneHold)) {
      bindAll(ps, name, owner, nonce);
      ps.executeUpdate();
    }
  }

  /**
   * Draws the next fencing token of {@code name} in autocommit, one statement: from the counter
   * rows ({@link MySqlFences}), which MySQL needs for want of sequences.
   */
  long draw(Connection c, String name) throws SQLException {
    return fences.drawCommitted(c, name);
  }

  /**
   * Draws the token of a committed grant and writes it if the row is still that grant's; else reads
   * back the token another call of the grant wrote, or reports the lock held.
   */
  private AcquireResult drawToken(Connection c, String name, String owner, Undrawn grant)
      throws SQLException {
    long drawn = draw(c, name);
    try (PreparedStatement ps = prepare(c, writeToken)) {
      bindAll(ps, drawn, name, grant.nonce());
      if (ps.executeUpdate() == 1) {
        return new AcquireResult.Granted(drawn, grant.holds());
      }
    }
    Row row = read(c, name);
    if (row == null) {
      return new AcquireResult.Held(Duration.ZERO); // ended (a forced release) before its token
    }
    if (row.nonce() == grant.nonce() && owner.equals(row.owner()) && row.remaining() > 0) {
      if (row.token() != 0) {
        return new AcquireResult.Granted(row.token(), row.holds());
      }
      // Still this grant's, unexpired, yet the write matched nothing: the database clock stepped.
      throw new SQLException("the token of the grant of '" + name + "' could not be written");
    }
    return row.held();
  }

  /** The columns of a lease row that an acquisition reads back. */
  private record Row(String owner, int holds, long token, long remaining, long nonce) {
    AcquireResult.Held held() {
      return new AcquireResult.Held(Duration.ofMillis(Math.max(0, remaining)));
    }
  }

  private @Nullable Row read(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = prepare(c, read)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return new Row(rs.getString(1), rs.getInt(2), rs.getLong(3), rs.getLong(4), rs.getLong(5));
      }
    }
  }

  static void bindAll(PreparedStatement ps, Object... values) throws SQLException {
    for (int i = 0; i < values.length; i++) {
      ps.setObject(i + 1, values[i]);
    }
  }
}
