package io.dlock.jdbc;

import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.ReleaseResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The SQL of one dialect for leased semaphores in {@link JdbcLockMode#LEASE_ROW} mode: a grant is a
 * row of {@code <table>_permits}, keyed by semaphore and owner key, whose lease ends by the
 * database's clock; {@code <table>_semaphores} holds one counter row per semaphore, never deleted,
 * that every acquisition locks: it orders the acquisitions of one semaphore (so the permits held
 * are summed and added to by one at a time) and holds the last fencing token, which so never goes
 * backwards. Apart from the lock tables: a semaphore and a lock of one name share nothing.
 *
 * <p>A subclass per dialect gives the clock, the race-safe creation of a counter row, and where it
 * can, fewer round trips; every statement is parameterized, the table name being the only
 * identifier put into the text.
 */
abstract class PermitStatements {
  /** The counter rows: {@code name}, {@code fence} (the last token drawn). */
  final String semaphores;

  /** The grants: semaphore, owner, permits, token, expires_at, holder, granted_at. */
  final String permits;

  final int queryTimeoutSeconds;

  private final String lockCounter;
  private final String dropEnded;
  private final String summary;
  private final String extend;
  private final String bumpCounter;
  private final String insert;
  private final String release;
  private final String renewOne;
  private final String holds;
  private final String holders;
  private final String describe;
  private final String deleteGrant;

  PermitStatements(String table, Duration statementTimeout) {
    this.semaphores = table + "_semaphores";
    this.permits = table + "_permits";
    this.queryTimeoutSeconds = (int) Math.max(1, (statementTimeout.toMillis() + 999) / 1000);
    String now = nowMillis();
    this.lockCounter = "SELECT fence FROM " + semaphores + " WHERE name = ? FOR UPDATE";
    this.dropEnded = "DELETE FROM " + permits + " WHERE semaphore = ? AND expires_at <= " + now;
    // The owner's token (a repeated request), the permits held and the soonest lease end, of the
    // live grants; read after the counter row's lock, so no acquisition of the semaphore is
    // between.
    this.summary =
        "SELECT MAX(CASE WHEN owner = ? THEN token END), COALESCE(SUM(permits), 0), MIN(expires_at) - "
            + now
            + " FROM "
            + permits
            + " WHERE semaphore = ? AND expires_at > "
            + now
            + summaryLocking();
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
    String grant = " WHERE semaphore = ? AND owner = ? AND token = ? AND expires_at > " + now;
    this.release = "DELETE FROM " + permits + grant;
    // A permit's owner is a grant owner, one holder: its lease is set as asked (an extension may
    // shorten it), as a lock's grant owner's is.
    this.renewOne = "UPDATE " + permits + " SET expires_at = " + now + " + ?" + grant;
    this.holds = "SELECT 1 FROM " + permits + grant;
    String columns =
        "SELECT semaphore, holder, token, permits, granted_at, expires_at - " + now + ", owner";
    String live = " WHERE semaphore = ? AND expires_at > " + now;
    this.holders = columns + " FROM " + permits + live + " ORDER BY token";
    this.describe = columns + " FROM " + permits + live + " AND token = ?";
    this.deleteGrant =
        "DELETE FROM " + permits + " WHERE semaphore = ? AND owner = ? AND token = ?";
  }

  /** The SQL expression of the database clock in milliseconds since the epoch (a BIGINT). */
  abstract String nowMillis();

  /**
   * Inserts the counter row of a semaphore (one parameter, its name) with fence 0 unless it exists,
   * without failing when another client inserts it at the same time.
   */
  abstract String createCounterSql();

  /** Appended to the summary read: the MySQL family's locking read (see there). */
  String summaryLocking() {
    return "";
  }

  /** After a release or a forced one, in its transaction: wakes waiters where the dialect can. */
  void signal(Connection c, String semaphore) throws SQLException {}

  /** Statements that read and write the permit tables without changing a row, to probe at start. */
  List<String> probes() {
    return List.of(
        "SELECT name, fence FROM " + semaphores + " WHERE 1 = 0",
        "UPDATE " + semaphores + " SET fence = fence WHERE 1 = 0",
        "SELECT semaphore, owner, permits, token, expires_at, holder, granted_at FROM "
            + permits
            + " WHERE 1 = 0",
        "UPDATE " + permits + " SET permits = permits WHERE 1 = 0");
  }

  /** A grant made by an acquisition, or an extended one. */
  record Outcome(AcquireResult result, boolean newGrant) {}

  /**
   * One attempt, in one transaction on {@code c} (which is left in autocommit): locks the counter
   * row (creating it first if missing, in autocommit, and trying once more), deletes the grants
   * whose lease ended, extends the owner's grant if it has one (a repeated request: same token,
   * nothing added), else grants if the permits held plus {@code count} fit {@code limit}, drawing
   * the token from the counter row.
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
      long leaseMillis)
      throws SQLException {
    for (int round = 0; round < 2; round++) {
      c.setAutoCommit(false);
      try {
        Long fence = lockCounter(c, semaphore);
        if (fence == null) {
          c.rollback(); // never insert after a locking read that found nothing: gap locks deadlock
          c.setAutoCommit(true);
          createCounter(c, semaphore);
          continue;
        }
        update(c, dropEnded, semaphore);
        AcquireResult result;
        boolean fresh = false;
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
        if (result instanceof AcquireResult.Granted granted) {
          if (fresh) {
            grant(c, semaphore, owner, count, granted.fencingToken(), holder, leaseMillis);
          } else {
            extend(c, semaphore, owner, leaseMillis);
          }
        }
        commit(c, fresh, semaphore, owner, result);
        return result;
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c, e);
        throw e;
      } finally {
        restoreAutoCommit(c);
      }
    }
    throw new SQLException(
        "the counter row of semaphore '"
            + semaphore
            + "' in "
            + semaphores
            + " is missing after"
            + " its insert",
        "42S02");
  }

  private void commit(
      Connection c, boolean fresh, String semaphore, String owner, AcquireResult result)
      throws SQLException {
    try {
      c.commit();
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
          signal(c, semaphore);
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
    try (PreparedStatement ps = prepare(c, lockCounter)) {
      ps.setString(1, semaphore);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  /** {@link #createCounterSql()} in autocommit. */
  void createCounter(Connection c, String semaphore) throws SQLException {
    update(c, createCounterSql(), semaphore);
  }

  private void grant(
      Connection c,
      String semaphore,
      String owner,
      int count,
      long token,
      String holder,
      long leaseMillis)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, bumpCounter)) {
      ps.setLong(1, token);
      ps.setString(2, semaphore);
      ps.setLong(3, token - 1);
      if (ps.executeUpdate() != 1) {
        throw new SQLException("the counter row of semaphore '" + semaphore + "' moved under lock");
      }
    }
    try (PreparedStatement ps = prepare(c, insert)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setInt(3, count);
      ps.setLong(4, token);
      ps.setLong(5, leaseMillis);
      ps.setString(6, holder);
      ps.executeUpdate();
    }
  }

  private void extend(Connection c, String semaphore, String owner, long leaseMillis)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, extend)) {
      ps.setLong(1, leaseMillis);
      ps.setString(2, semaphore);
      ps.setString(3, owner);
      ps.executeUpdate(); // 0 with a driver counting changed rows: a longer lease kept
    }
  }

  /** Deletes the owner's grant {@code token} if its lease has not ended, and signals it. */
  ReleaseResult release(Connection c, String semaphore, String owner, long token)
      throws SQLException {
    try (PreparedStatement ps = prepare(c, release)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setLong(3, token);
      if (ps.executeUpdate() != 1) {
        return ReleaseResult.NOT_HELD;
      }
    }
    signal(c, semaphore);
    return ReleaseResult.RELEASED;
  }

  /**
   * Extends every lease of the batch whose grant (owner and token) is still held, in one JDBC batch
   * (one round trip with drivers that pipeline batches).
   *
   * @return the positions of the leases that are gone
   */
  Set<Integer> renew(Connection c, List<HeldLease> leases) throws SQLException {
    Set<Integer> gone = new HashSet<>();
    try (PreparedStatement ps = prepare(c, renewOne)) {
      for (HeldLease lease : leases) {
        ps.setLong(1, lease.lease().toMillis());
        ps.setString(2, lease.lockName());
        ps.setString(3, lease.owner().key());
        ps.setLong(4, lease.fencingToken());
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      for (int i = 0; i < counts.length; i++) {
        // No count, or 0 from a driver counting changed rows (the lease end as it was): asked
        // again,
        // as LockStatements#renew does. Nothing revives an ended grant, so held now was held then.
        if (counts[i] < 1 && !holds(c, leases.get(i))) {
          gone.add(i);
        }
      }
    }
    return gone;
  }

  private boolean holds(Connection c, HeldLease lease) throws SQLException {
    try (PreparedStatement ps = prepare(c, holds)) {
      ps.setString(1, lease.lockName());
      ps.setString(2, lease.owner().key());
      ps.setLong(3, lease.fencingToken());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** The live grants of {@code semaphore}, by token. */
  List<PermitInfo> holders(Connection c, String semaphore) throws SQLException {
    try (PreparedStatement ps = prepare(c, holders)) {
      ps.setString(1, semaphore);
      try (ResultSet rs = ps.executeQuery()) {
        List<PermitInfo> out = new ArrayList<>();
        while (rs.next()) {
          out.add(info(rs));
        }
        return out;
      }
    }
  }

  /**
   * Deletes the live grant {@code token} of {@code semaphore} whoever holds it, and signals it.
   * Deletes only the grant it read (owner and token), so it returns that grant as it was.
   */
  Optional<PermitInfo> forceRelease(Connection c, String semaphore, long token)
      throws SQLException {
    PermitInfo before;
    String owner;
    try (PreparedStatement ps = prepare(c, describe)) {
      ps.setString(1, semaphore);
      ps.setLong(2, token);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        before = info(rs);
        owner = rs.getString(7);
      }
    }
    try (PreparedStatement ps = prepare(c, deleteGrant)) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      ps.setLong(3, token);
      if (ps.executeUpdate() != 1) {
        return Optional.empty(); // released meanwhile
      }
    }
    signal(c, semaphore);
    return Optional.of(before);
  }

  /** Columns semaphore, holder, token, permits, granted_at (ms), remaining lease (ms). */
  private static PermitInfo info(ResultSet rs) throws SQLException {
    String holder = rs.getString(2);
    long grantedAt = rs.getLong(5);
    boolean hasGrantedAt = !rs.wasNull();
    return new PermitInfo(
        rs.getString(1),
        holder == null ? "unknown" : holder,
        rs.getLong(3),
        rs.getInt(4),
        hasGrantedAt ? Instant.ofEpochMilli(grantedAt) : null,
        Duration.ofMillis(Math.max(0, rs.getLong(6))));
  }

  final PreparedStatement prepare(Connection c, String sql) throws SQLException {
    return LockStatements.prepare(c, sql, queryTimeoutSeconds);
  }

  private int update(Connection c, String sql, String semaphore) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql)) {
      ps.setString(1, semaphore);
      return ps.executeUpdate();
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
