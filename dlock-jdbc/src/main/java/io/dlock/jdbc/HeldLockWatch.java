package io.dlock.jdbc;

import io.dlock.MonotonicClock;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.LeaseEndTimer;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease end and the heartbeat of the grants of {@link HeldLocks}, timed on a thread of their
 * own and run on HeldLocks' I/O executor: a lock not renewed before its lease ends is released
 * here, as a lease row would expire; and the connection of each lock runs a statement at least once
 * per heartbeat interval, so that the server never finds a live holder idle past its idle limit,
 * and a dead connection is found and reported.
 */
final class HeldLockWatch implements AutoCloseable {
  // The logger of HeldLocks, whose work this is: the log lines keep their category.
  private static final Logger log = LoggerFactory.getLogger(HeldLocks.class);

  private final ConcurrentHashMap<String, HeldGrant> holdings;
  private final HeldLockStatements statements;
  private final HeldLocks.Connections connections;
  private final GrantRecords records;
  private final GrantConnections grants;
  private final LossReports reports;
  private final Executor io;
  private final long heartbeatNanos;
  private final ScheduledExecutorService timer;
  private final LeaseEndTimer<HeldGrant> leaseEnds;

  /** HeldLocks' clock, as {@link HeldLocks#useClock} set it. */
  private final Supplier<MonotonicClock> clock;

  /**
   * @param holdings HeldLocks' grants by name
   * @param io HeldLocks' I/O executor, where the checks run
   * @param threadName the name of the timer's thread
   */
  HeldLockWatch(
      ConcurrentHashMap<String, HeldGrant> holdings,
      HeldLockStatements statements,
      HeldLocks.Connections connections,
      GrantRecords records,
      GrantConnections grants,
      LossReports reports,
      Executor io,
      Supplier<MonotonicClock> clock,
      Duration heartbeatInterval,
      String threadName) {
    this.holdings = holdings;
    this.statements = statements;
    this.connections = connections;
    this.records = records;
    this.grants = grants;
    this.reports = reports;
    this.io = io;
    this.clock = clock;
    this.heartbeatNanos = heartbeatInterval.toNanos();
    this.timer = DriverThreads.timer(threadName);
    this.leaseEnds = new LeaseEndTimer<>(timer, h -> runOnExecutor(() -> endIfRunOut(h)));
    // Ticks at half the interval, and a connection is checked once it was last confirmed half an
    // interval ago: so every held connection runs a statement at least once per interval (plus the
    // statement's own time), well inside the server's idle limit of lease + interval + 1 s.
    timer.scheduleWithFixedDelay(
        this::heartbeatTick, heartbeatNanos / 2, heartbeatNanos / 2, TimeUnit.NANOSECONDS);
  }

  // ---- lease end and heartbeat --------------------------------------------------------------

  /** Measures lease ends on the client's clock; once, when the backend starts. */
  void useClock(MonotonicClock clock) {
    leaseEnds.useClock(clock);
  }

  void scheduleEndCheck(HeldGrant h) {
    h.endTimer = leaseEnds;
    leaseEnds.register(h, h.leaseEndNanos);
  }

  /** Releases a lock whose lease ran out without renewal, as a lease row would expire. */
  private void endIfRunOut(HeldGrant h) {
    h.io.lock();
    try {
      if (h.released || h.dead) {
        return;
      }
      if (h.leaseEndNanos - clock.get().nanoTime() > 0) {
        scheduleEndCheck(h); // renewed meanwhile
        return;
      }
      h.releasing = true;
      h.released = true;
      holdings.remove(h.name, h);
      try {
        statements.unlock(h.connection, h.name, h.owner, h.token);
      } catch (SQLException e) {
        h.dropConnection(); // closing the connection frees the lock on the server
        return;
      }
      grants.giveBackUnbound(h);
      log.debug("The lease of '{}' ran out without renewal; released it", h.name);
    } finally {
      h.io.unlock();
    }
  }

  private void heartbeatTick() {
    long now = clock.get().nanoTime();
    for (HeldGrant h : holdings.values()) {
      // Every connection that nothing confirmed for half an interval, renewed or not: a renewal
      // interval may be far longer than the server's idle limit of the grant's first (shortest)
      // hold, and the server must never find a live holder idle. Dead connections are reported,
      // except under renewal, whose next renewal reports them (as the lock taken over).
      boolean due =
          h.dead ? !h.reported && !h.renewed : now - h.confirmedNanos >= heartbeatNanos / 2;
      if (due && !h.released && h.checking.compareAndSet(false, true)) {
        runOnExecutor(
            () -> {
              try {
                check(h);
              } finally {
                h.checking.set(false);
              }
            });
      }
    }
  }

  /** Checks one lock's connection; reports the lease lost if the database freed it. */
  private void check(HeldGrant h) {
    h.io.lock();
    try {
      if (h.released) {
        return;
      }
      if (!h.dead) {
        long sentAt = clock.get().nanoTime();
        long leftMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(h.leaseEndNanos - sentAt));
        try {
          statements.heartbeat(h.connection, h.name, h.owner, h.token, leftMillis);
          h.confirmedNanos = sentAt;
          return;
        } catch (SQLException e) {
          grants.markDead(h, e);
        }
      }
    } finally {
      h.io.unlock();
    }
    if (!h.renewed && connections.reachable() && reports.report(h)) {
      records.clearRecord(h); // the holds are told: the record need not hold the lock any more
    }
    // Unreachable: the next tick asks again; the core ends the lease when it runs out.
  }

  private void runOnExecutor(Runnable task) {
    try {
      io.execute(
          () -> {
            try {
              task.run();
            } catch (RuntimeException e) {
              log.warn("A held-lock check failed: {}", e.toString());
            }
          });
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  /** Stops the timer: no lease end or heartbeat is checked any more. */
  @Override
  public void close() {
    timer.shutdownNow();
  }
}
