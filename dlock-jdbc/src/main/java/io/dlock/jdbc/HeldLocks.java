package io.dlock.jdbc;

import io.dlock.BackendUnavailableException;
import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.HeldLease;
import io.dlock.spi.ReleaseResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locks of one client in a connection-bound mode ({@link JdbcLockMode#SESSION}, {@link
 * JdbcLockMode#ROW}): each grant keeps a connection of its own until release. Its methods block:
 * acquisition and renewal run on the backend's call executor; release, the lease end and the
 * heartbeat checks on an executor of their own ({@link #ioExecutor()}), so that an unlock stuck on
 * a dead socket never takes a thread that another holder's renewal needs. Every grant connection
 * has a network timeout, so nothing waits on a silent socket for longer than that.
 *
 * <p>Three things watch a held lock besides release:
 *
 * <ul>
 *   <li><b>Renewal</b> is a heartbeat on the lock's connection and extends the lease kept here.
 *   <li><b>The lease end</b>: a lock not renewed before its lease ends (a fixed lease, or a holder
 *       whose renewals stopped) is released here, as a lease row would expire, so a holder that
 *       hangs blocks others no longer than its lease.
 *   <li><b>The heartbeat</b>: the connection of each lock, renewed or not, runs a statement at
 *       least once per {@code heartbeatInterval}, so that the server never finds a live holder idle
 *       past its idle limit, and a dead connection is found.
 * </ul>
 *
 * <p>A dead connection means the database has freed the lock, if the database is reachable: a
 * renewal then reports the lease gone, and the heartbeat reports it lost through {@link
 * BackendEvents#leaseLost}. If the database cannot be reached, nothing is certain (a partition may
 * leave the session alive on the server for a while): renewals fail and the core lets the lease run
 * out, as with any backend.
 *
 * <p>This class keeps the held grants and runs the primitives on them. {@link HeldLockWatch} times
 * the lease end and the heartbeat; {@link GrantConnections} does the I/O on a grant's connection
 * besides its lock; {@link LossReports} tells the holds of a loss; {@link GrantRecords} keeps the
 * grant records.
 */
final class HeldLocks implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HeldLocks.class);

  /** Opens, tests and discards connections; given by the backend, which knows its pool. */
  interface Connections {
    Connection open() throws SQLException;

    /** Closes the physical connection, so that the database frees whatever it held. */
    void discard(Connection c);

    /** Whether the database answers now, on a fresh connection. */
    boolean reachable();
  }

  private final HeldLockStatements statements;
  private final Connections connections;
  private final GrantRecords records;
  private final ExecutorService io;
  private final Semaphore slots;
  private final int maxHeldLocks;
  private final Duration retryBound;
  private final ConcurrentHashMap<String, HeldGrant> holdings = new ConcurrentHashMap<>();
  private final GrantConnections grants;
  private final LossReports reports;
  private final HeldLockWatch watch;
  private final HeldLockRenewal renewal;

  /** The client's clock, from {@link #useClock}; every lease end here is read on it. */
  private volatile MonotonicClock clock = MonotonicClock.SYSTEM;

  HeldLocks(
      HeldLockStatements statements,
      Connections connections,
      Duration networkTimeout,
      int maxHeldLocks,
      Duration heartbeatInterval,
      String threadName) {
    this.statements = statements;
    this.connections = connections;
    this.records = new GrantRecords(statements, connections);
    // Each task does I/O on one grant connection, bounded by its network timeout, and the held
    // locks bound the connections; tasks must never queue behind one another (many releases of one
    // owner id's holds waiting for a stuck connection would delay other grants' lease ends).
    this.io = DriverThreads.onDemand(threadName + "-io");
    this.maxHeldLocks = maxHeldLocks;
    this.slots = new Semaphore(maxHeldLocks);
    this.retryBound = heartbeatInterval;
    this.grants =
        new GrantConnections(statements, slots, networkTimeout, heartbeatInterval, () -> clock);
    this.reports = new LossReports(statements);
    this.watch =
        new HeldLockWatch(
            holdings,
            statements,
            connections,
            records,
            grants,
            reports,
            io,
            () -> clock,
            heartbeatInterval,
            threadName);
    this.renewal =
        new HeldLockRenewal(
            holdings, statements, connections, records, grants, reports, () -> clock);
  }

  /** Now on the client's clock ({@link #useClock}). */
  long now() {
    return clock.nanoTime();
  }

  /** Called when the backend starts, before any grant: lease ends are measured on {@code clock}. */
  void useClock(MonotonicClock clock) {
    watch.useClock(clock); // refuses a second start: lease ends already registered would move
    this.clock = clock;
  }

  void bindEvents(BackendEvents events) {
    reports.bindEvents(events);
  }

  // ---- the primitives ---------------------------------------------------------------------

  /**
   * @param calledAt when the backend's {@code tryAcquire} was called, on the client's clock ({@link
   *     #now}): a new grant says how long after it its lease began
   */
  AcquireResult tryAcquire(
      String name,
      String owner,
      boolean countsHolds,
      long leaseMillis,
      String holder,
      long calledAt)
      throws SQLException {
    long leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    HeldGrant current = holdings.get(name);
    HeldGrant deadHold = null;
    if (current != null) {
      current.io.lock();
      try {
        if (!current.released && !current.dead) {
          if (!current.owner.equals(owner)) {
            return new AcquireResult.Held(retryBound); // another owner of this client holds it
          }
          if (current.releasing) {
            // Its release was asked for and has not run yet (the core undoes a grant whose
            // request saw its session lost, then tries again with the same owner): never re-enter
            // a grant about to be unlocked; ask again once the release is through.
            return new AcquireResult.Held(RELEASING_RETRY);
          }
          // Re-entry is a round trip, as on a lease row: only a grant the database still holds
          // (its connection answers) may be entered again; a dead one is replaced by a new grant.
          if (grants.confirm(current, leaseMillis)
              && grants.coverLease(current, leaseMillis)
              && recordLeaseOrMarkDead(current, leaseMillis, name)) {
            if (countsHolds) {
              current.holds++; // a grant owner asking again is a repeat and adds no hold
            }
            current.extend(leaseNanos);
            return new AcquireResult.Granted(current.token, current.holds);
          }
          // Its loss is not reported now: the event names no token, and would reach this very
          // request in flight, whose new grant the core would then undo. The dead grant's own
          // record (live until its holds are told) refuses this request a new grant, unless it
          // ran out; the loss is reported once this request is answered (below), then the record
          // is cleared, and the owner is granted at its next attempt. A new grant (the record ran
          // out) replaces the dead one, and the core tells its holds (TAKEN_OVER).
          if (reports.claimReport(current)) {
            deadHold = current;
          }
        }
      } finally {
        current.io.unlock();
      }
    }
    if (!slots.tryAcquire()) {
      if (deadHold != null) {
        reports.sendLost(deadHold);
        // its holds are told: its record need not hold the lock any more (as below)
        records.clearRecord(deadHold);
      }
      throw new BackendUnavailableException(
          "this client already holds "
              + maxHeldLocks
              + " locks in "
              + statements.mode()
              + " mode, each on a connection of its own; release some, or raise"
              + " JdbcLockSettings.withMaxHeldLocks (and the pool size with it)");
    }
    Connection c = null;
    int poolNetworkTimeout = 0;
    boolean kept = false;
    boolean clean = false;
    try {
      c = connections.open();
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      poolNetworkTimeout = grants.boundSocket(c);
      // The database ends the session by itself once it idled past the lease (plus the margin):
      // a live holder is never idle that long (renewals and heartbeats run statements on it).
      HeldLockStatements.Granted locked =
          statements.lock(c, name, owner, holder, leaseMillis, grants.horizonMillis(leaseMillis));
      if (locked == null) {
        clean = true;
        // The database frees a lock silently when its holder's connection dies: re-check at least
        // once per heartbeat interval (PostgreSQL's NOTIFY wakes waiters sooner on a release).
        return new AcquireResult.Held(retryBound);
      }
      long recordSentAt = clock.nanoTime(); // no later than the send of the record's statement
      HeldLockStatements.Granted granted = records.record(name, owner, holder, locked, leaseMillis);
      if (granted == null) {
        // Another grant's record is live: its holder may still trust a lock that the server
        // freed with its session. Undone by discarding the connection; asked again later.
        return new AcquireResult.Held(retryBound);
      }
      HeldGrant fresh =
          new HeldGrant(
              name,
              owner,
              granted.token(),
              c,
              poolNetworkTimeout,
              leaseNanos,
              clock,
              connections,
              slots);
      fresh.boundMillis = grants.horizonMillis(leaseMillis);
      HeldGrant stale = holdings.put(name, fresh);
      if (stale != null) {
        log.debug("Replaced the dead hold of '{}' by a new grant", name);
      }
      watch.scheduleEndCheck(fresh);
      kept = true;
      // Row mode: the grant's lease is its record's, which began on the server with the record's
      // statement, several round trips into the call (the pool, the locking transaction): counted
      // from the call, a slow network spent them out of the lease, and the first renewal came back
      // after it (RowLockSlowNetworkTest). Session mode records in the locking statement.
      long leaseStartedAfter = statements.recordsApart() ? Math.max(0, recordSentAt - calledAt) : 0;
      return new AcquireResult.Granted(granted.token(), 1, leaseStartedAfter);
    } finally {
      if (!kept) {
        if (c != null) {
          if (clean) {
            // nothing held on it: back to the pool
            GrantConnections.giveBack(c, poolNetworkTimeout);
          } else {
            connections.discard(c); // whatever it may hold is freed with it
          }
        }
        slots.release();
        if (deadHold != null) {
          reports.sendLost(deadHold);
          // its holds are told: its record need not hold the lock any more
          records.clearRecord(deadHold);
        }
      }
    }
  }

  private static final Duration RELEASING_RETRY = Duration.ofMillis(20);

  /**
   * Called on the caller's thread when a release is asked for, before it runs on the I/O executor:
   * a grant owner (one that does not count its holds) holds once, so its release is final, and from
   * now on neither re-entry nor renewal may count on the grant. (Without this, an acquisition
   * retried by the same owner could re-enter the grant before its queued release ran, and then lose
   * it unawares.)
   */
  void releaseRequested(String name, String owner, boolean countsHolds, long token) {
    HeldGrant h = holdings.get(name);
    if (h != null && h.token == token && h.owner.equals(owner) && !countsHolds) {
      h.releasing = true;
    }
  }

  /**
   * Releases one hold of the grant {@code token}. The token identifies the grant: a grant that died
   * and was replaced by a newer grant of the same owner (an owner id) is not held any more, and its
   * late release must never reach the newer one. A hold count above one is lowered only after the
   * connection confirmed the grant, so that a release that finds it gone says so.
   */
  ReleaseResult release(String name, String owner, long token) throws SQLException {
    HeldGrant h = holdings.get(name);
    if (h == null || !h.owner.equals(owner) || h.token != token) {
      return ReleaseResult.NOT_HELD;
    }
    h.io.lock();
    try {
      if (h.released) {
        return ReleaseResult.NOT_HELD;
      }
      if (!h.dead && h.holds > 1) {
        long leftMillis =
            Math.max(1, TimeUnit.NANOSECONDS.toMillis(h.leaseEndNanos - clock.nanoTime()));
        if (grants.confirm(h, leftMillis)) {
          h.holds--;
          return ReleaseResult.STILL_HELD;
        }
      }
      h.releasing = true;
      h.released = true;
      holdings.remove(name, h);
      h.cancelEndCheck();
      if (h.dead) {
        return goneUnlessUnreachable(h);
      }
      try {
        statements.unlock(h.connection, name, owner, h.token);
      } catch (SQLException e) {
        // A dead or silent connection (the network timeout): closing it frees the lock on the
        // server as soon as the server notices (its idle timeout at the latest).
        log.debug("Release of '{}' failed on its connection: {}", name, e.toString());
        h.dropConnection();
        return goneUnlessUnreachable(h);
      }
      // Released: whatever fails from here on, the lock is free (a listener told otherwise would
      // hear TAKEN_OVER of a release that worked).
      grants.giveBackUnbound(h);
      return ReleaseResult.RELEASED;
    } finally {
      h.io.unlock();
    }
  }

  /**
   * A lock whose connection died: not held, if the database says so by answering. Its record is
   * cleared once every hold of it is told (the one released here, and any other of its owner id).
   */
  private ReleaseResult goneUnlessUnreachable(HeldGrant h) throws SQLException {
    h.dropConnection();
    if (connections.reachable()) {
      if (h.holds <= 1) {
        records.clearRecord(h); // the hold released here was the last
      } else if (!h.reported) {
        h.reported = true; // the other holds of its owner id: told before the record is cleared
        reports.sendLost(h);
        records.clearRecord(h);
      } // else another thread tells them, and clears the record then
      return ReleaseResult.NOT_HELD; // the database ended the session and freed the lock
    }
    throw new SQLException(
        "the connection holding '"
            + h.name
            + "' is gone and the database cannot be reached to confirm the lock is free",
        "08006");
  }

  /** Renews a batch of this client's leases: see {@link HeldLockRenewal#renew}. */
  Set<HeldLease> renew(List<HeldLease> leases) throws SQLException {
    return renewal.renew(leases);
  }

  /**
   * {@link GrantRecords#recordLease}, marking {@code h} dead if the record is not the grant's.
   *
   * @throws SQLException if the record could not be confirmed: the grant lives, and the re-entry
   *     fails (never taken for a loss)
   */
  private boolean recordLeaseOrMarkDead(HeldGrant h, long leaseMillis, String name)
      throws SQLException {
    boolean recorded;
    try {
      recorded = records.recordLease(h, leaseMillis);
    } catch (SQLException e) {
      grants.markDead(h, e);
      return false;
    }
    if (!recorded) {
      throw new SQLException(
          "the record of '" + name + "' could not be moved for the re-entry: try again", "08006");
    }
    return true;
  }

  /** Where release and the checks of held connections run, apart from the backend's calls. */
  Executor ioExecutor() {
    return io;
  }

  /** Stops the timers and closes what is still held (the core released the live locks first). */
  @Override
  public void close() {
    watch.close();
    io.shutdown();
    for (HeldGrant h : holdings.values()) {
      h.io.lock();
      try {
        h.released = true;
        h.dropConnection();
      } finally {
        h.io.unlock();
      }
    }
    holdings.clear();
  }
}
