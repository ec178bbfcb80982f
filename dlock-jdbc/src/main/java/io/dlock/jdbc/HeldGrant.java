package io.dlock.jdbc;

import io.dlock.MonotonicClock;
import io.dlock.spi.LeaseEndTimer;
import java.sql.Connection;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * One lock of {@link HeldLocks} held on its own connection: the grant, its hold count, the lease
 * kept by the client and the state of its connection. State changes happen under {@link #io}.
 *
 * <p>Threads: the client's call threads (acquire, release, renew), the watch's timer thread and its
 * executor (heartbeat, lease end), and close. Every write and every decision taken on a field is
 * made under {@link #io}; the flags that the heartbeat tick reads without {@link #io}, to pick the
 * grants worth a check ({@link #released}, {@link #dead}, {@link #reported}, {@link #renewed}), are
 * volatile as well, so that it sees their latest values and never skips a dead connection's check
 * for a stale one (the check itself reads them again under {@link #io}).
 */
final class HeldGrant {
  final String name;
  final String owner;
  final long token;
  final Connection connection;
  final int poolNetworkTimeout;
  final ReentrantLock io = new ReentrantLock();
  final AtomicBoolean checking = new AtomicBoolean();

  /** Under {@link #io} only. */
  int holds = 1;

  /** Written under {@link #io}; volatile for the heartbeat tick's read (see the class). */
  volatile boolean released;

  /** Written under {@link #io}; volatile for the heartbeat tick's read (see the class). */
  volatile boolean dead;

  /** Written under {@link #io}; volatile for the heartbeat tick's read (see the class). */
  volatile boolean reported;

  /** Under {@link #io} only. */
  boolean slotHeld = true;

  /**
   * Set when the last hold's release is asked for ({@link HeldLocks#releaseRequested}) or begins:
   * renewal need not wait for it, and re-entry must not join it.
   */
  volatile boolean releasing;

  /**
   * The trust horizon the server's bounds on this session cover now (see {@link
   * GrantConnections#horizonMillis}); raised, never lowered, when a re-entry brings a longer lease.
   * Under {@link #io}.
   */
  long boundMillis;

  /** Whether a renewal ran: its renewals then report the connection's death (TAKEN_OVER). */
  volatile boolean renewed;

  volatile long leaseEndNanos;
  volatile long confirmedNanos;

  /** The timer where this grant's lease end is registered (see HeldLockWatch), or null. */
  volatile @Nullable LeaseEndTimer<HeldGrant> endTimer;

  /** Where {@link #dropConnection} gives the connection and its slot back: HeldLocks'. */
  private final HeldLocks.Connections connections;

  private final Semaphore slots;

  /** The client's clock, on which {@link #leaseEndNanos} and {@link #confirmedNanos} are read. */
  private final MonotonicClock clock;

  HeldGrant(
      String name,
      String owner,
      long token,
      Connection connection,
      int poolNetworkTimeout,
      long leaseNanos,
      MonotonicClock clock,
      HeldLocks.Connections connections,
      Semaphore slots) {
    this.name = name;
    this.owner = owner;
    this.token = token;
    this.connection = connection;
    this.poolNetworkTimeout = poolNetworkTimeout;
    this.connections = connections;
    this.slots = slots;
    this.clock = clock;
    long now = clock.nanoTime();
    this.leaseEndNanos = now + leaseNanos;
    this.confirmedNanos = now;
  }

  /** Extends the lease kept here; never shortens it (another hold may need it longer). */
  void extend(long leaseNanos) {
    long end = clock.nanoTime() + leaseNanos;
    if (end - leaseEndNanos > 0) {
      leaseEndNanos = end;
    }
  }

  /** Cancels the check of the lease end, if one is scheduled. */
  void cancelEndCheck() {
    LeaseEndTimer<HeldGrant> timer = endTimer;
    if (timer != null) {
      timer.unregister(this);
    }
  }

  /** Gives the connection up, physically closed, and its slot back; once. Under {@link #io}. */
  void dropConnection() {
    if (slotHeld) {
      slotHeld = false;
      connections.discard(connection);
      slots.release();
    }
  }
}
