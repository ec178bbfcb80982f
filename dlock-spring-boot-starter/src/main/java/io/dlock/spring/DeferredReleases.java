package io.dlock.spring;

import io.dlock.Lease;
import io.dlock.LockException;
import io.dlock.LockOptions;
import io.dlock.spi.DriverThreads;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases that must wait until a lock has been held long enough ({@link Locked#holdAtLeast()},
 * ShedLock's {@code lockAtLeastFor}). The server's lease is first shortened to end just after that
 * moment, so that the lock frees then even if this process dies; the release itself is this
 * process's timer. {@link #close()} is the graceful shutdown: the locks still waiting are left held
 * on the server until their shortened leases end ({@link Lease#abandon}), not released early, so
 * that another instance does not run the same job again during a deploy. Where holds belong to a
 * session (ZooKeeper, database session and row locks) they end when the lock client closes, if that
 * comes first.
 */
public final class DeferredReleases implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DeferredReleases.class);

  /**
   * How much longer than the wanted hold the server's lease is set to, so that this process's
   * release at the end of the hold always comes while the lease is still trusted.
   */
  private static final Duration SLACK = Duration.ofSeconds(1);

  /** Starts its thread at the first deferred release (an application may never defer one). */
  private final ScheduledExecutorService timer;

  private final Set<Lease> waiting = ConcurrentHashMap.newKeySet();

  /**
   * @param threadName the name of the timer's thread
   */
  public DeferredReleases(String threadName) {
    this.timer = DriverThreads.timer(threadName);
  }

  /**
   * Releases {@code lease} once it has been held {@code keep} longer (now if that has passed).
   *
   * @param renewed whether the lease is renewed while held (a fixed lease ends on its own, and is
   *     released just before its end if that comes first)
   * @param what the holder, for the log (a method, a job)
   */
  public void releaseAfter(Lease lease, Duration keep, boolean renewed, String what) {
    if (keep.isNegative() || keep.isZero() || !lease.isValid()) {
      release(lease, what);
      return;
    }
    long start = System.nanoTime();
    keepOnServerFor(lease, keep, renewed, what);
    // Measured again after the extension's round trip. A fixed lease is released no later than
    // just before its trusted end (released then rather than reported lost); a renewed one is
    // renewed, with the length set above, until the release (found by review: capped by a renewed
    // lease's remaining time, a hold longer than the lease was released too early).
    long releaseIn = keep.toNanos() - (System.nanoTime() - start);
    if (!renewed) {
      releaseIn = Math.min(releaseIn, lease.remaining().toNanos() - 10_000_000L);
    }
    if (releaseIn <= 0) {
      release(lease, what);
      return;
    }
    waiting.add(lease);
    try {
      timer.schedule(() -> release(lease, what), releaseIn, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      waiting.remove(lease);
      lease.abandon(); // closed meanwhile: left on the server, as close() leaves the others
    }
  }

  /**
   * Shortens the server's lease to end just after {@code keep} (plus the slack), unless it ends
   * before that anyway.
   */
  private static void keepOnServerFor(Lease lease, Duration keep, boolean renewed, String what) {
    // The client trusts a lease of L for L - (1% of L + 2 ms): ask for enough that the trusted
    // part covers keep and the slack.
    long wanted = keep.plus(SLACK).toNanos() + 2_000_000L;
    Duration until = Duration.ofNanos(wanted + wanted / 99 + 1);
    if (!renewed && until.compareTo(lease.remaining()) >= 0) {
      return; // a fixed lease that ends by then anyway, no later than this would
    }
    if (until.compareTo(LockOptions.MAX_LEASE) > 0) {
      until = LockOptions.MAX_LEASE;
    }
    if (until.compareTo(LockOptions.MIN_LEASE) < 0) {
      until = LockOptions.MIN_LEASE;
    }
    try {
      lease.extend(until);
    } catch (LockException | IllegalStateException e) {
      // Not confirmed, lost, or released meanwhile (by the method itself, or a closed client): the
      // release below reports what is left to report.
      log.debug("{}: lock '{}' keeps its lease: {}", what, lease.lockName(), e.toString());
    }
  }

  private void release(Lease lease, String what) {
    waiting.remove(lease);
    try {
      lease.release();
    } catch (LockException e) {
      log.warn(
          "{}: release of lock '{}' failed; it expires with its lease: {}",
          what,
          lease.lockName(),
          e.toString());
    }
  }

  /**
   * The graceful shutdown: the locks still waiting for their release stay held on the server until
   * their leases end; nothing more is released from here.
   */
  @Override
  public void close() {
    timer.shutdownNow();
    for (Lease lease : waiting) {
      lease.abandon(); // a release that runs at this moment wins the lease's own check, or loses
    }
    waiting.clear();
  }
}
