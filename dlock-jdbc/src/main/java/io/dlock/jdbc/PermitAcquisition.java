package io.dlock.jdbc;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The acquisition of permits: one transaction that locks the semaphore's counter row, so that the
 * acquisitions of one semaphore run one at a time, each summing the permits held after the last one
 * committed. The counter row is created (race-safe, by the dialect) in autocommit before the
 * transaction, never in it after a locking read that found nothing: on InnoDB two such reads hold
 * gap locks that each one's insert waits for. The statements of the dialect are {@link
 * PermitStatements}'s; the clock is the database's.
 */
final class PermitAcquisition {
  private final PermitStatements statements;
  private final String dropEnded;
  private final String summary;
  private final String extend;
  private final LongSupplier clock;
  private final String bumpCounter;
  private final String insert;
  private final String deleteGrant;
  private final String liveGrant;
  private final PermitShortcuts shortcuts;

  /**
   * @param clock the client's clock, on which the send of the statement that sets a grant's lease
   *     is noted ({@link AcquireResult.Granted#leaseStartedAfterNanos})
   */
  PermitAcquisition(PermitStatements statements, LongSupplier clock) {
    this.statements = statements;
    this.clock = clock;
    String semaphores = statements.semaphores;
    String permits = statements.permits;
    String now = statements.nowMillis();
    this.dropEnded = "DELETE FROM " + permits + " WHERE semaphore = ? AND expires_at <= " + now;
    // The owner's token (a repeated request), the permits held and the soonest lease end, of the
    // live grants, and the count of ended ones; read under the counter row's lock, so no
    // acquisition of the semaphore is between, and under the grants' row locks where the dialect
    // has them (see PermitStatements#liveGrants and #summarySql).
    this.summary = statements.summarySql();
    // A repeat never shortens the lease: the first request's answer may be on its way still.
    this.extend =
        "UPDATE "
            + permits
            + " SET expires_at = GREATEST(expires_at, "
            + now
            + " + ?) WHERE semaphore = ? AND owner = ? AND expires_at > "
            + now;
    this.bumpCounter = "UPDATE " + semaphores + " SET fence = ? WHERE name = ? AND fence = ?";
    this.insert =
        "INSERT INTO "
            + permits
            + " (semaphore, owner, permits, token, expires_at, holder, granted_at) VALUES"
            + " (?, ?, ?, ?, "
            + now
            + " + ?, ?, "
            + now
            + ")";
    this.deleteGrant =
        "DELETE FROM " + permits + " WHERE semaphore = ? AND owner = ? AND token = ?";
    this.liveGrant =
        "SELECT 1 FROM "
            + permits
            + " WHERE semaphore = ? AND owner = ? AND token = ? AND expires_at > "
            + now;
    this.shortcuts = new PermitShortcuts(statements, clock);
  }

  private PreparedStatement prepare(Connection c, String sql) throws SQLException {
    return statements.prepare(c, sql);
  }

  /**
   * One attempt, in one transaction on {@code c} (which is left in autocommit): locks the counter
   * row (creating it first if missing, in autocommit, and trying once more; the MySQL family draws
   * the next fence with the lock), reads the grants, deletes those whose lease ended if there are
   * any, extends the owner's grant if it has one (a repeated request: same token, nothing added),
   * else grants if the permits held plus {@code count} fit {@code limit}, the token being the
   * counter row's next fence.
   *
   * @throws GrantToUndo if a new grant's commit failed: it may have been committed
   */
  AcquireResult acquire(
      Connection c,
      String semaphore,
      int limit,
      int count,
      String owner,
      String holder,
      long leaseMillis,
      long calledAtNanos)
      throws SQLException {
    PermitShortcuts.Precheck read = shortcuts.precheck(c, semaphore, limit, count, owner);
    if (read.refusal() != null) {
      return read.refusal();
    }
    int deadlocks = 0;
    for (int round = 0; round < 2; round++) {
      c.setAutoCommit(false);
      try {
        long transactionSentAt = clock.getAsLong();
        Long fence = lockCounter(c, semaphore);
        if (fence == null) {
          c.rollback(); // never insert after a locking read that found nothing: gap locks deadlock
          c.setAutoCommit(true);
          statements.createCounter(c, semaphore);
          continue;
        }
        AcquireResult result =
            read.oneStatement()
                ? shortcuts.grantIfRoom(
                    c,
                    semaphore,
                    limit,
                    count,
                    owner,
                    holder,
                    leaseMillis,
                    fence + 1,
                    calledAtNanos)
                : null;
        if (result != null) {
          commit(c, true, semaphore, owner, result);
          return result;
        }
        boolean fresh = false;
        long ended;
        try (PreparedStatement ps = prepare(c, summary)) {
          ps.setString(1, owner);
          ps.setString(2, semaphore);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            long mine = rs.getLong(1);
            boolean repeat = !rs.wasNull();
            long held = rs.getLong(2);
            long soonest = rs.getLong(3);
            boolean anyHeld = !rs.wasNull();
            ended = rs.getLong(4);
            if (repeat) {
              result = new AcquireResult.Granted(mine, 1);
            } else if (held + count <= limit) {
              result = new AcquireResult.Granted(fence + 1, 1);
              fresh = true;
            } else {
              result =
                  new AcquireResult.Held(Duration.ofMillis(anyHeld ? Math.max(0, soonest) : 0));
            }
          }
        }
        if (ended > 0) {
          // After the summary, which read the live grants only: an ended grant holds nothing, but
          // its row would keep its owner's repeat from being granted anew.
          try (PreparedStatement ps = prepare(c, dropEnded)) {
            ps.setString(1, semaphore);
            ps.executeUpdate();
          }
        }
        if (result instanceof AcquireResult.Granted granted) {
          long leaseSentAt =
              fresh
                  ? grant(c, semaphore, owner, count, granted.fencingToken(), holder, leaseMillis)
                  : extend(c, semaphore, owner, granted.fencingToken(), leaseMillis);
          if (leaseSentAt == ENDED) {
            // The repeat's grant ended after the summary read it (the clock moves within the
            // transaction): nothing was extended, and it must not be answered as held. The next
            // attempt deletes it and grants anew.
            result = new AcquireResult.Held(Duration.ZERO);
          } else {
            // The lease began on the server with that statement, three or four round trips into
            // the call: counted from the call, a slow network would spend them out of the lease.
            // Where the clock is fixed for the transaction (H2), it began with an earlier
            // statement: counted from the transaction's first.
            long from = statements.clockFixedInTransaction() ? transactionSentAt : leaseSentAt;
            result =
                new AcquireResult.Granted(
                    granted.fencingToken(), granted.holdCount(), Math.max(0, from - calledAtNanos));
          }
        }
        commit(c, fresh, semaphore, owner, result);
        return result;
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c, e);
        // InnoDB picked this transaction as a deadlock's victim and rolled it back, the fence's
        // draw too: nothing was granted, and the attempt again is safe. Acquisitions of two
        // semaphores next to each other in the grants' key order meet on the gap lock between
        // them (found by review). Never a new grant's commit failure (GrantToUndo: it may have
        // been applied); a repeat's or a refusal's commit that failed so applied nothing, and
        // asking again repeats it.
        if (e instanceof SQLException sql
            && !(e instanceof GrantToUndo)
            && MySqlLeaseRowAcquisition.deadlockVictim(sql)
            && ++deadlocks < 3) {
          round--;
          continue;
        }
        throw e;
      } finally {
        restoreAutoCommit(c);
      }
    }
    throw new SQLException(
        "the counter row of semaphore '"
            + semaphore
            + "' in "
            + statements.semaphores
            + " is missing after its insert",
        "42S02");
  }

  /**
   * Commits by returning to autocommit, one request (JDBC: a change of autocommit within a
   * transaction commits it), where a commit and then the return were two on MariaDB and MySQL,
   * whose drivers send each: the grant's answer is one round trip sooner after its lease began.
   */
  private void commit(
      Connection c, boolean fresh, String semaphore, String owner, AcquireResult result)
      throws SQLException {
    try {
      c.setAutoCommit(true);
    } catch (SQLException e) {
      if (!fresh) {
        throw e; // an extension committed or not leaves no grant that was not there
      }
      long token = ((AcquireResult.Granted) result).fencingToken();
      // It may have been committed: taken back on another connection, or the permits stayed
      // taken for the lease with nobody holding them.
      throw new GrantToUndo(e, other -> undo(other, semaphore, owner, token));
    }
  }

  /**
   * Deletes the grant {@code token} of {@code owner}, after locking the counter row: a commit still
   * in flight on the server (its connection lost) ends first, so its grant is seen and deleted.
   */
  private void undo(Connection c, String semaphore, String owner, long token) throws SQLException {
    c.setAutoCommit(false);
    try {
      lockCounter(c, semaphore);
      try (PreparedStatement ps = prepare(c, deleteGrant)) {
        ps.setString(1, semaphore);
        ps.setString(2, owner);
        ps.setLong(3, token);
        if (ps.executeUpdate() == 1) {
          statements.signal(c, semaphore);
        }
      }
      c.commit();
    } catch (SQLException | RuntimeException e) {
      rollbackQuietly(c, e);
      throw e;
    } finally {
      restoreAutoCommit(c);
    }
  }

  /** The counter row's fence, locked until the transaction ends; null if the row is missing. */
  private @Nullable Long lockCounter(Connection c, String semaphore) throws SQLException {
    return statements.lockCounter(c, semaphore);
  }

  /** Grants; returns when (on the client's clock) the statement setting its lease was sent. */
  private long grant(
      Connection c,
      String semaphore,
      String owner,
      int count,
      long token,
      String holder,
      long leaseMillis)
      throws SQLException {
    if (!statements.drawsFenceWhenLocked()) {
      try (PreparedStatement ps = prepare(c, bumpCounter)) {
        ps.setLong(1, token);
        ps.setString(2, semaphore);
        ps.setLong(3, token - 1);
        if (ps.executeUpdate() != 1) {
          throw new SQLException(
              "the counter row of semaphore '" + semaphore + "' moved under lock");
        }
      }
    }
    try (PreparedStatement ps = prepare(c, insert)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setInt(3, count);
      ps.setLong(4, token);
      ps.setLong(5, leaseMillis);
      ps.setString(6, holder);
      long sentAt = clock.getAsLong();
      ps.executeUpdate();
      return sentAt;
    }
  }

  /** What {@link #extend} returns when the repeat's grant had ended: nothing was extended. */
  private static final long ENDED = Long.MIN_VALUE;

  /**
   * Extends a repeat's lease; returns when the statement was sent (on the client's clock), or
   * {@link #ENDED}.
   */
  private long extend(Connection c, String semaphore, String owner, long token, long leaseMillis)
      throws SQLException {
    long sentAt;
    int updated;
    try (PreparedStatement ps = prepare(c, extend)) {
      ps.setLong(1, leaseMillis);
      ps.setString(2, semaphore);
      ps.setString(3, owner);
      sentAt = clock.getAsLong();
      updated = ps.executeUpdate();
    }
    if (updated >= 1) {
      return sentAt;
    }
    // 0: the grant ended since the summary (found by review: PermitLeaseStartTest), or a driver
    // counting changed rows and a longer lease kept. Asked, as PermitStatements#renew does:
    // nothing revives an ended grant, so live now was live at the extend.
    try (PreparedStatement ps = prepare(c, liveGrant)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setLong(3, token);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? sentAt : ENDED;
      }
    }
  }

  private static void rollbackQuietly(Connection c, Throwable failure) {
    try {
      if (!c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  /** Back to autocommit, as the pool and the next caller expect; a dead connection is left. */
  private static void restoreAutoCommit(Connection c) {
    try {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      // The connection is broken: the pool finds out and discards it.
    }
  }
}
