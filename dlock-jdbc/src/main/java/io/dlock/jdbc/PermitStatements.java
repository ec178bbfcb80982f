package io.dlock.jdbc;

import io.dlock.PermitInfo;
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

  /** The statement timeout in milliseconds, as configured. */
  final long statementTimeoutMillis;

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
    this.statementTimeoutMillis = statementTimeout.toMillis();
    String now = nowMillis();
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
   * Whether {@link #nowMillis()} stays the same within a transaction, once it has written, rather
   * than moving with each statement: then a lease set by a statement began with an earlier one.
   */
  boolean clockFixedInTransaction() {
    return false;
  }

  /**
   * Inserts the counter row of a semaphore (one parameter, its name) with fence 0 unless it exists,
   * without failing when another client inserts it at the same time.
   */
  abstract String createCounterSql();

  /**
   * What the acquisition's summary reads the live grants of a semaphore from (one parameter, the
   * semaphore's name), under the counter row's lock. It must wait for a grant's row changed and not
   * yet committed, and then count that row as committed: a renewal evaluated before the lease ended
   * but committed after it would otherwise be read as ended, and revived after the permits were
   * granted again. Here a plain read (H2); the other dialects lock the rows they read.
   */
  String liveGrants() {
    return permits + " WHERE semaphore = ? AND expires_at > " + nowMillis();
  }

  /**
   * The acquisition's summary of a semaphore's grants, read under the counter row's lock, with two
   * parameters (the owner, the semaphore): the owner's token if it holds a live grant, the permits
   * the live grants hold, the soonest lease end from now, and how many grants have ended, which the
   * acquisition deletes only then. Here the count is 1, so they are always deleted: the live
   * grants' read ({@link #liveGrants}) does not see them.
   */
  String summarySql() {
    return "SELECT MAX(CASE WHEN owner = ? THEN token END), COALESCE(SUM(permits), 0),"
        + " MIN(expires_at) - "
        + nowMillis()
        + ", 1 FROM "
        + liveGrants();
  }

  /**
   * A plain read of a semaphore's grants, without any lock, parameters the owner, the owner again
   * and the semaphore: how many live grants the owner holds, the permits the live grants hold, the
   * soonest lease end from now, and how many rows would keep {@link #grantIfRoomSql} from granting
   * (the owner's, live or ended, and every ended one); or null where the dialect does not read so
   * before its transaction ({@link PermitAcquisition#acquire}).
   */
  @Nullable String precheckSql() {
    return null;
  }

  /**
   * A new grant in one statement, under the counter row's lock, where the dialect has one: it
   * inserts the grant only if the owner holds no grant, no grant of the semaphore has ended (their
   * rows are the full path's to delete) and the live grants' permits plus the asked ones fit the
   * limit, reading the grants as {@link #summarySql} does (a locking read that waits for a renewal
   * in flight). Ten parameters: semaphore, owner, permits, token, lease (ms), holder; then owner,
   * semaphore, permits, limit. It inserts nothing when it does not grant, and the acquisition then
   * takes the full path. Null where the dialect has none: it needs {@link #drawsFenceWhenLocked}
   * (the token is the fence its lock drew).
   */
  @Nullable String grantIfRoomSql() {
    return null;
  }

  /**
   * Whether {@link #lockCounter} also draws the next fence: the counter row then holds the last
   * fence drawn (which may exceed the highest token granted: an attempt that grants nothing leaves
   * a gap), and a grant writes no fence of its own.
   */
  boolean drawsFenceWhenLocked() {
    return false;
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

  /**
   * Locks the counter row of {@code semaphore} until the transaction on {@code c} ends.
   *
   * @return its fence, or null if the row is missing
   */
  @Nullable Long lockCounter(Connection c, String semaphore) throws SQLException {
    try (PreparedStatement ps =
        prepare(c, "SELECT fence FROM " + semaphores + " WHERE name = ? FOR UPDATE")) {
      ps.setString(1, semaphore);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  /** {@link #createCounterSql()} in autocommit. */
  void createCounter(Connection c, String semaphore) throws SQLException {
    try (PreparedStatement ps = prepare(c, createCounterSql())) {
      ps.setString(1, semaphore);
      ps.executeUpdate();
    }
  }
}
