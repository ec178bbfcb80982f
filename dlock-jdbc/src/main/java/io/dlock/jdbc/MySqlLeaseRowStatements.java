package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Lease rows on MySQL 8 (and unchanged on MariaDB): one transaction that locks the name's row with
 * {@code INSERT ... ON DUPLICATE KEY UPDATE}, reads the outcome back (MySQL has no {@code
 * RETURNING}), and for a new grant draws the fencing token ({@link MySqlFences}) and writes it into
 * the row, all under the row's lock, then commits.
 *
 * <p>MySQL and MariaDB apply the assignments of {@code ON DUPLICATE KEY UPDATE} left to right, each
 * seeing the ones before, so the order below matters: every decision reads the old expiry, which is
 * assigned last; the hold count reads the old owner too, which is assigned after it. Values are
 * bound again as parameters rather than read with {@code VALUES()}, which MySQL 8.0.20 deprecated.
 * A row taken over (or inserted) gets token 0, "not drawn yet", and its token is drawn only once
 * this transaction holds the row: a token drawn before would let an acquisition delayed after
 * drawing be granted a lower token than a grant made meanwhile.
 *
 * <p>Round trips: autocommit off, the upsert, the read, for a new grant the draw and the token's
 * write, and the commit: 4, or 6 for a new grant (MariaDB: 4 at most, {@link
 * MariaDbLeaseRowStatements}). The clock is {@code UTC_TIMESTAMP(6)}, the same throughout one
 * statement and independent of the session's time zone.
 */
class MySqlLeaseRowStatements extends LockStatements {
  private static final String NOW = MySqlDialect.NOW_MILLIS;

  private final String upsert;
  private final String read;
  private final String writeToken;
  private final MySqlFences fences;

  MySqlLeaseRowStatements(String table, Duration statementTimeout) {
    super(table, statementTimeout);
    this.upsert =
        """
        INSERT INTO %1$s (name, owner, holds, token, expires_at, holder, granted_at)
        VALUES (?, ?, 1, 0, %2$s + ?, ?, %2$s)
        ON DUPLICATE KEY UPDATE
          holder = IF(expires_at <= %2$s, ?, holder),
          granted_at = IF(expires_at <= %2$s, %2$s, granted_at),
          holds = IF(owner = ? AND expires_at > %2$s, holds + ?, IF(expires_at <= %2$s, 1, holds)),
          token = IF(expires_at <= %2$s, 0, token),
          owner = IF(expires_at <= %2$s, ?, owner),
          expires_at = IF(expires_at <= %2$s, %2$s + ?,
                          IF(owner = ?, GREATEST(expires_at, %2$s + ?), expires_at))
        """
            .formatted(table, NOW);
    this.read =
        "SELECT owner, holds, token, expires_at - " + NOW + " FROM " + table + " WHERE name = ?";
    this.writeToken = "UPDATE " + table + " SET token = ? WHERE name = ? AND token = 0";
    this.fences = new MySqlFences(table, queryTimeoutSeconds);
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
    return "io/dlock/jdbc/schema/mysql-v1.sql";
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
   * One transaction; if the name's counter row is missing, it is rolled back, the row created in
   * autocommit, and the attempt made once more.
   */
  @Override
  final AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    for (int round = 0; ; round++) {
      c.setAutoCommit(false);
      boolean committed = false;
      AcquireResult result;
      try {
        result = attempt(c, name, owner, countsHolds, holder, leaseMillis);
        if (result != null) {
          c.setAutoCommit(true); // commits the transaction (JDBC and both servers say so)
          committed = true;
          return result;
        }
      } finally {
        if (!committed) {
          rollBack(c);
        }
      }
      if (round > 0) {
        throw new SQLException(
            "the fencing counter row of '" + name + "' is missing after its insert", "42S02");
      }
      fences.createSlot(c, name); // back in autocommit: see MySqlFences.createSlot
    }
  }

  private static void rollBack(Connection c) {
    try {
      c.rollback();
      c.setAutoCommit(true);
    } catch (SQLException ignored) {
      // A failed rollback leaves autocommit off: turning it on would commit what the transaction
      // did. The pool rolls back or discards the connection; the caller gets the first failure.
    }
  }

  /**
   * The attempt inside the open transaction, which commits it if this returns a result; null if the
   * name's counter row is missing (the transaction is then rolled back).
   */
  @Nullable AcquireResult attempt(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, upsert)) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, leaseMillis);
      ps.setString(4, holder);
      ps.setString(5, holder);
      ps.setString(6, owner);
      ps.setInt(7, countsHolds ? 1 : 0); // an owner id re-enters, a grant owner repeats
      ps.setString(8, owner);
      ps.setLong(9, leaseMillis);
      ps.setString(10, owner);
      ps.setLong(11, leaseMillis);
      ps.executeUpdate();
    }
    String rowOwner;
    int holds;
    long token;
    long remaining;
    try (PreparedStatement ps = prepare(c, read)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("the lease row of '" + name + "' vanished inside its upsert");
        }
        rowOwner = rs.getString(1);
        holds = rs.getInt(2);
        token = rs.getLong(3);
        remaining = rs.getLong(4);
      }
    }
    if (!owner.equals(rowOwner)) {
      return new AcquireResult.Held(Duration.ofMillis(Math.max(0, remaining)));
    }
    if (token != 0) {
      return new AcquireResult.Granted(token, holds);
    }
    long drawn = fences.draw(c, name);
    if (drawn == 0) {
      return null;
    }
    try (PreparedStatement ps = prepare(c, writeToken)) {
      ps.setLong(1, drawn);
      ps.setString(2, name);
      if (ps.executeUpdate() != 1) {
        throw new SQLException("the lease row of '" + name + "' changed under its lock");
      }
    }
    return new AcquireResult.Granted(drawn, holds);
  }
}
