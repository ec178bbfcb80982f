package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * The MySQL family's lease-row acquisition ({@link MySqlLeaseRowStatements}, both dialects): one
 * autocommit upsert that decides, then for a new grant the token's draw and its conditional write,
 * and the undo of whatever a failed attempt may have left (a grant, or a hold counted in one).
 */
final class MySqlLeaseRowAcquisition {
  private static final String NOW = MySqlDialect.NOW_MILLIS;

  /** Draws the next fencing token of a name, in autocommit, one statement. */
  @FunctionalInterface
  interface TokenDraw {
    long draw(Connection c, String name) throws SQLException;
  }

  private final String upsert;
  private final String read;
  private final String writeToken;
  private final String undoOnlyHold;
  private final String undoOneHold;
  private final int queryTimeoutSeconds;
  private final TokenDraw draw;
  private final MySqlSessionFence fence;

  MySqlLeaseRowAcquisition(String table, int queryTimeoutSeconds, TokenDraw draw) {
    this.queryTimeoutSeconds = queryTimeoutSeconds;
    this.draw = draw;
    this.fence = new MySqlSessionFence(queryTimeoutSeconds);
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
  AcquireResult acquire(
      Connection c, String name, String owner, boolean countsHolds, String holder, long leaseMillis)
      throws SQLException {
    long nonce = newNonce();
    long session = fence.sessionOf(c);
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
          // which nobody would hear of, or may still be waiting on the server to make it. Left, it
          // would block the name for its lease. Undone on another connection, once the upsert's
          // session has ended (then nothing of it can apply later), by this call's nonce: nothing
          // if it made none. A re-entry lost so is left: one hold too many, which ends with the
          // lease.
          throw lostUpsert(e, session, name, owner, nonce);
        }
        // Any other failure may have come after the statement applied: MySQL Connector/J reports
        // a timeout it fired as the answer came (found by review). The statement has ended by now
        // (answered, or killed by the driver's KILL QUERY; MariaDB's driver times out on the
        // server, which rolls it back), so this attempt's own grant, if it made one, is undone
        // here.
        try {
          undoOnce(c, name, owner, nonce);
        } catch (SQLException undoFailure) {
          e.addSuppressed(undoFailure);
          if (connectionFailed(undoFailure)) {
            throw lostUpsert(e, session, name, owner, nonce);
          }
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
    // The upsert made a grant (outcome == nonce) or counted a hold in the grant named by outcome:
    // from here on, a failure takes back exactly that (by the grant's nonce, once).
    try {
      Undrawn grant;
      if (outcome == nonce) {
        grant = new Undrawn(nonce, 1, true);
      } else {
        Row row = read(c, name);
        if (row == null || row.nonce() != outcome || !owner.equals(row.owner())) {
          // The grant re-entered ended (its lease, a forced release) before this read, and the
          // hold counted in it with it: held, ask again.
          return new AcquireResult.Held(Duration.ZERO);
        }
        if (row.token() != 0) {
          return new AcquireResult.Granted(row.token(), row.holds());
        }
        grant = new Undrawn(outcome, row.holds(), false);
      }
      return drawToken(c, name, owner, grant);
    } catch (SQLException e) {
      // The grant (or this hold of it) is in the row and nobody will hear of it: undo it, or it
      // would block the name (or keep a hold of an owner id) until its lease ends (a failed read
      // of a re-entry too: found by review). On a connection that died (the likeliest cause here)
      // nothing more reaches the server: the caller runs the undo on another connection, once. A
      // statement of this connection applied late does no harm: a read, a draw (a token unused),
      // a token write matching no row or the grant's own. On a live connection it runs here,
      // once: run again elsewhere after an answer lost, an owner id's "one hold less" would take a
      // hold of another caller.
      long grantNonce = outcome;
      if (connectionFailed(e)) {
        throw new GrantToUndo(e, other -> undoOnce(other, name, owner, grantNonce));
      }
      undo(c, name, owner, grantNonce, e);
      throw e;
    }
  }

  /** The undo of an upsert whose answer was lost: its session ended first, then by its nonce. */
  private GrantToUndo lostUpsert(
      SQLException e, long session, String name, String owner, long nonce) {
    return new GrantToUndo(
        e,
        other -> {
          fence.end(other, session);
          undoOnce(other, name, owner, nonce);
        });
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

  /**
   * InnoDB's deadlock victim (error 1213; SQLState 40001 from other databases): its transaction was
   * rolled back. Not a lock wait timeout (1205), which MySQL Connector/J also reports as 40001:
   * another attempt would wait the whole timeout again (found by review).
   */
  static boolean deadlockVictim(SQLException e) {
    return e.getErrorCode() == 1213
        || (e.getErrorCode() != 1205 && "40001".equals(e.getSQLState()));
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
   * Draws the token of a committed grant and writes it if the row is still that grant's; else reads
   * back the token another call of the grant wrote, or reports the lock held.
   */
  private AcquireResult drawToken(Connection c, String name, String owner, Undrawn grant)
      throws SQLException {
    long drawn = draw.draw(c, name);
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

  private PreparedStatement prepare(Connection c, String sql) throws SQLException {
    return LockStatements.prepare(c, sql, queryTimeoutSeconds);
  }
}
