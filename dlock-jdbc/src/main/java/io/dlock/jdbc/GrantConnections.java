package io.dlock.jdbc;

import io.dlock.MonotonicClock;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection of each grant of {@link HeldLocks}, besides its lock and unlock: bounded in time
 * when taken from the pool ({@link HeldLocks.Connections}), confirmed by a heartbeat, the server's
 * bounds on its session raised for a longer lease, dropped once dead, and given back to the pool
 * once its lock is released.
 */
final class GrantConnections {
  // The logger of HeldLocks, whose work this is: the log lines keep their category.
  private static final Logger log = LoggerFactory.getLogger(HeldLocks.class);

  static final long IDLE_MARGIN_MILLIS = 1000;

  private final HeldLockStatements statements;
  private final Semaphore slots;
  private final int networkTimeoutMillis;
  private final long heartbeatNanos;

  /** HeldLocks' clock, as {@link HeldLocks#useClock} set it. */
  private final Supplier<MonotonicClock> clock;

  GrantConnections(
      HeldLockStatements statements,
      Semaphore slots,
      Duration networkTimeout,
      Duration heartbeatInterval,
      Supplier<MonotonicClock> clock) {
    this.statements = statements;
    this.slots = slots;
    this.networkTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, networkTimeout.toMillis());
    this.heartbeatNanos = heartbeatInterval.toNanos();
    this.clock = clock;
  }

  /**
   * How long after its last statement the client may still trust a lease of {@code leaseMillis}
   * (the lease counts from when a grant or renewal was sent), plus a margin of the heartbeat
   * interval and 1 s: every bound the server puts on the holding session (idle timeout, keepalive,
   * {@code tcp_user_timeout}, {@code wait_timeout}) is at least this, so that the client always
   * stops trusting its lease before the server frees the lock; and the heartbeat keeps a live
   * holder's connection busier than that.
   */
  long horizonMillis(long leaseMillis) {
    return leaseMillis + TimeUnit.NANOSECONDS.toMillis(heartbeatNanos) + IDLE_MARGIN_MILLIS;
  }

  /**
   * Raises the server's bounds on {@code h}'s session when a re-entry brings a longer lease than
   * they cover (the first hold's lease set them). Under {@code h.io}.
   *
   * @return false if the connection is dead (marked so)
   */
  boolean coverLease(HeldGrant h, long leaseMillis) {
    long horizon = horizonMillis(leaseMillis);
    if (horizon <= h.boundMillis) {
      return true;
    }
    try {
      statements.raiseBounds(h.connection, horizon);
      h.boundMillis = horizon;
      return true;
    } catch (SQLException e) {
      markDead(h, e);
      return false;
    }
  }

  /**
   * Sets the grant connection's network timeout, so that no read on it waits past that on a silent
   * network (a stuck unlock or heartbeat fails, and the connection is closed).
   *
   * @return the timeout to restore before the connection goes back to the pool ({@link
   *     SocketTimeouts#bound})
   */
  int boundSocket(Connection c) {
    return SocketTimeouts.bound(c, networkTimeoutMillis);
  }

  /** Back to the pool, with the pool's network timeout. */
  static void giveBack(Connection c, int poolNetworkTimeout) throws SQLException {
    SocketTimeouts.restore(c, poolNetworkTimeout);
    c.close();
  }

  /**
   * After the unlock of {@code h}: undoes the session's settings and gives the connection back to
   * the pool, or discards it if that fails (its settings are unknown). Under {@code h.io}.
   */
  void giveBackUnbound(HeldGrant h) {
    try {
      statements.unbound(h.connection);
      h.slotHeld = false;
      slots.release();
      giveBack(h.connection, h.poolNetworkTimeout); // nothing held on it any more
    } catch (SQLException e) {
      log.debug("Released '{}', but could not undo its session settings: {}", h.name, e.toString());
      h.dropConnection();
    }
  }

  /**
   * Whether the grant's connection answers a heartbeat now (so the database still holds its lock);
   * marks it dead if not. Under {@code h.io}.
   */
  boolean confirm(HeldGrant h, long leaseMillis) {
    long sentAt = clock.get().nanoTime();
    try {
      statements.heartbeat(h.connection, h.name, h.owner, h.token, leaseMillis);
      h.confirmedNanos = sentAt;
      return true;
    } catch (SQLException e) {
      markDead(h, e);
      return false;
    }
  }

  void markDead(HeldGrant h, Exception cause) {
    if (!h.dead) {
      h.dead = true;
      log.debug("The connection holding '{}' is dead: {}", h.name, cause.toString());
      h.dropConnection();
      h.cancelEndCheck();
    }
  }
}
