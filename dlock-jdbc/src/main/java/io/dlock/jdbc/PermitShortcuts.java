package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ways around a permit acquisition's full transaction where the dialect has them (the MySQL
 * family, which sends no release signals, so that waiters poll): the plain read before the counter
 * row's lock, which refuses an attempt that cannot fit without taking the lock, and the grant in
 * one statement under it ({@link PermitStatements#precheckSql}, {@link
 * PermitStatements#grantIfRoomSql}). {@link PermitAcquisition} runs the transaction around them.
 */
final class PermitShortcuts {
  private static final Logger log = LoggerFactory.getLogger(PermitAcquisition.class);

  private final PermitStatements statements;
  private final LongSupplier clock;
  private final @Nullable String precheck;
  // Holds null where the dialect has no one-statement grant, or once the server refused it.
  private final AtomicReference<@Nullable String> grantIfRoom;

  /**
   * @param clock the client's clock, on which the send of the one-statement grant is noted
   */
  PermitShortcuts(PermitStatements statements, LongSupplier clock) {
    this.statements = statements;
    this.clock = clock;
    this.precheck = statements.precheckSql();
    this.grantIfRoom = new AtomicReference<>(statements.grantIfRoomSql());
    if (grantIfRoom.get() != null && !statements.drawsFenceWhenLocked()) {
      throw new IllegalStateException("a one-statement grant needs the fence drawn with the lock");
    }
  }

  private PreparedStatement prepare(Connection c, String sql) throws SQLException {
    return statements.prepare(c, sql);
  }

  /**
   * What the plain read before the lock found: a refusal (the attempt cannot fit by the last
   * committed grants), or whether the one-statement grant is worth sending under the lock.
   */
  record Precheck(@Nullable AcquireResult refusal, boolean oneStatement) {}

  /** No plain read: the locked transaction decides, on the full path. */
  static final Precheck FULL_PATH = new Precheck(null, false);

  /**
   * Where the dialect reads so ({@link PermitStatements#precheckSql}), the refusal of an attempt
   * that cannot fit by the last committed grants, without the counter row's lock; else whether the
   * one-statement grant may grant: not where the owner has a row (a repeat) or a grant has ended
   * (the full path deletes it), where it would only cost a round trip under the lock before the
   * full path. It can only refuse: a grant is always the transaction's.
   */
  Precheck precheck(Connection c, String semaphore, int limit, int count, String owner)
      throws SQLException {
    if (precheck == null) {
      return FULL_PATH;
    }
    try (PreparedStatement ps = prepare(c, precheck)) {
      ps.setString(1, owner);
      ps.setString(2, owner);
      ps.setString(3, semaphore);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return FULL_PATH;
        }
        boolean repeat = rs.getLong(1) > 0;
        long held = rs.getLong(2);
        long soonest = rs.getLong(3);
        boolean anyHeld = !rs.wasNull();
        boolean clean = rs.getLong(4) == 0;
        if (repeat || held + count <= limit) {
          return new Precheck(null, clean && grantIfRoom.get() != null);
        }
        return new Precheck(
            new AcquireResult.Held(Duration.ofMillis(anyHeld ? Math.max(0, soonest) : 0)), false);
      }
    }
  }

  /**
   * The grant in one statement, where the dialect has it ({@link PermitStatements#grantIfRoomSql}),
   * in the transaction that holds the counter row's lock; null if it granted nothing (no room, a
   * repeat, ended grants to delete), and the full path decides. A server that refuses its syntax
   * (MySQL 8 is not tested here: see docs/jdbc.md) is told once in the log, and the acquisitions
   * take the full path from then on; the transaction goes on, as the MySQL family's does after a
   * statement's error.
   */
  AcquireResult.@Nullable Granted grantIfRoom(
      Connection c,
      String semaphore,
      int limit,
      int count,
      String owner,
      String holder,
      long leaseMillis,
      long token,
      long calledAtNanos)
      throws SQLException {
    String sql = grantIfRoom.get();
    if (sql == null) {
      return null;
    }
    long sentAt;
    try (PreparedStatement ps = prepare(c, sql)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setInt(3, count);
      ps.setLong(4, token);
      ps.setLong(5, leaseMillis);
      ps.setString(6, holder);
      ps.setString(7, owner);
      ps.setString(8, semaphore);
      ps.setInt(9, count);
      ps.setInt(10, limit);
      sentAt = clock.getAsLong();
      if (ps.executeUpdate() != 1) {
        return null;
      }
    } catch (SQLException e) {
      if (!refusesTheStatement(e)) {
        throw e; // a deadlock, a lock wait, a broken connection: as any statement's
      }
      if (grantIfRoom.compareAndSet(sql, null)) {
        log.warn(
            "the server refused the one-statement grant of {}; every acquisition takes the full"
                + " path from now on (one round trip more under the counter row's lock): {}",
            statements.permits,
            e.toString());
      }
      return null;
    }
    // The lease began with this statement, three round trips into the call.
    return new AcquireResult.Granted(token, 1, Math.max(0, sentAt - calledAtNanos));
  }

  /**
   * Whether the server refused the one-statement grant itself (its syntax, a feature it lacks, the
   * permits table in a derived table of an insert into it), as it would every time: SQL states 42
   * (but a missing table or column, which the full path meets too) and 0A, and MySQL's 1093
   * (ER_UPDATE_TABLE_USED) and 1221 (ER_WRONG_USAGE), reported as HY000. Such an error ends the
   * statement alone, not the transaction, on the MySQL family: the counter row stays locked.
   */
  static boolean refusesTheStatement(SQLException e) {
    String state = e.getSQLState();
    if (state != null
        && ((state.startsWith("42") && !state.equals("42S02") && !state.equals("42S22"))
            || state.startsWith("0A"))) {
      return true;
    }
    return e.getErrorCode() == 1093 || e.getErrorCode() == 1221;
  }
}
