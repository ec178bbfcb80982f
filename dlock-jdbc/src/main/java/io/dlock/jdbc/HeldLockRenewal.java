package io.dlock.jdbc;

import io.dlock.MonotonicClock;
import io.dlock.spi.HeldLease;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The renewal of the grants of {@link HeldLocks}: each lease's record moved before the client
 * extends its trust, the holding connection confirmed (or the holding session, by the record's own
 * statement), and a grant found dead reported. Runs on the backend's call executor; takes each
 * grant's I/O lock as {@link HeldLockWatch} and the release do.
 */
final class HeldLockRenewal {
  private final ConcurrentHashMap<String, HeldGrant> holdings;
  private final HeldLockStatements statements;
  private final HeldLocks.Connections connections;
  private final GrantRecords records;
  private final GrantConnections grants;
  private final LossReports reports;

  /** HeldLocks' clock, as {@link HeldLocks#useClock} set it. */
  private final Supplier<MonotonicClock> clock;

  HeldLockRenewal(
      ConcurrentHashMap<String, HeldGrant> holdings,
      HeldLockStatements statements,
      HeldLocks.Connections connections,
      GrantRecords records,
      GrantConnections grants,
      LossReports reports,
      Supplier<MonotonicClock> clock) {
    this.holdings = holdings;
    this.statements = statements;
    this.connections = connections;
    this.records = records;
    this.grants = grants;
    this.reports = reports;
    this.clock = clock;
  }

  /**
   * Renews each lease whose grant this client holds: where the record confirms the holding session
   * by itself, the record's statement alone, sent before the grant's I/O lock; else a heartbeat on
   * the holding connection, then the record. A grant found dead is reported lost if the database
   * answers.
   *
   * @return the leases that are gone
   * @throws SQLException if a grant could not be confirmed for want of the database
   */
  Set<HeldLease> renew(List<HeldLease> leases) throws SQLException {
    Set<HeldLease> gone = new HashSet<>();
    Boolean reachable = null;
    boolean unsure = false;
    for (HeldLease lease : leases) {
      HeldGrant h = holdings.get(lease.lockName());
      if (h == null || !h.owner.equals(lease.owner().key()) || h.token != lease.fencingToken()) {
        gone.add(lease); // not this grant: it ended, whatever holds the name now
        continue;
      }
      // Where the record's statement confirms the holding session by itself, it needs nothing of
      // the holding connection, and is sent before the grant's I/O lock is taken: a heartbeat
      // under way there (a round trip on a slow path) does not delay the renewal. A release or a
      // death meanwhile is seen under the lock, and wins; a move after a release finds no record.
      Boolean movedEarly = null;
      SQLException notTheGrants = null;
      if (statements.renewalConfirmsSession() && !h.released && !h.dead && !h.releasing) {
        try {
          movedEarly = records.recordLease(h, lease.lease().toMillis());
        } catch (SQLException e) {
          movedEarly = false;
          notTheGrants = e;
        }
      }
      if (!lockForRenewal(h)) {
        gone.add(lease); // its last hold is being released right now
        continue;
      }
      try {
        if (h.released) {
          gone.add(lease);
          continue;
        }
        if (!h.dead) {
          long sentAt = clock.get().nanoTime();
          try {
            boolean moved;
            if (movedEarly != null) {
              if (notTheGrants != null) {
                throw notTheGrants;
              }
              moved = movedEarly;
            } else {
              if (!statements.renewalConfirmsSession()) {
                statements.heartbeat(
                    h.connection, h.name, h.owner, h.token, lease.lease().toMillis());
                h.confirmedNanos = sentAt;
              }
              moved = records.recordLease(h, lease.lease().toMillis());
            }
            if (moved) {
              h.renewed = true;
              h.extend(lease.lease().toNanos());
            } else {
              unsure = true; // the lock is alive, but its record could not be moved: not renewed
            }
            continue;
          } catch (SQLException e) {
            grants.markDead(h, e);
          }
        }
      } finally {
        h.io.unlock();
      }
      if (reachable == null) {
        reachable = connections.reachable();
      }
      if (reachable) {
        if (records.recordStillTheGrants(h) && reports.report(h)) {
          // The server ended the session (a restart, a kill, a timeout): the holder is told here,
          // before its record is cleared and so lets another client have the lock. A record
          // cleared by someone else (a forced release) is a take-over, which the core reports.
          // Only the thread that told the holds clears the record, once they are told.
          records.clearRecord(h);
        }
        gone.add(lease);
      } else {
        unsure = true;
      }
    }
    if (unsure) {
      throw new SQLException(
          "a lock's connection or record could not be confirmed: the database cannot be reached"
              + " to tell whether the lock survived",
          "08006");
    }
    return gone;
  }

  /**
   * Takes {@code h.io} for a renewal, without waiting behind the unlock of its last hold (which may
   * be stuck on a dead socket until the network timeout). Any other I/O on the connection is a
   * heartbeat or re-entry check, bounded by the network timeout: waited for.
   *
   * @return false if the grant is being released
   */
  private boolean lockForRenewal(HeldGrant h) {
    while (true) {
      if (h.releasing) {
        return false;
      }
      try {
        if (h.io.tryLock(RENEW_LOCK_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
          return true;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while renewing", e);
      }
    }
  }

  private static final long RENEW_LOCK_POLL_MILLIS = 10;
}
