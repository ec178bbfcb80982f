package io.dlock.core;

import io.dlock.Lease;
import io.dlock.LockEventListener;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import org.jspecify.annotations.Nullable;

/**
 * An acquisition on the calling thread, the loop of Curator's {@code LockInternals}: re-entry, the
 * first attempt, then parking for a release signal (or a backoff step, or the holder's lease end)
 * and trying again until the wait ends. The steps are {@link Acquisitions}'; this class owns only
 * the loop, the events it reports, and its end when the client closes.
 */
final class BlockingAcquisition {
  private final CoreLockClient client;
  private final Acquisitions steps;
  private final MonotonicClock clock;
  private final LockEvents lockEvents;

  BlockingAcquisition(
      CoreLockClient client, Acquisitions steps, MonotonicClock clock, LockEvents lockEvents) {
    this.client = client;
    this.steps = steps;
    this.clock = clock;
    this.lockEvents = lockEvents;
  }

  /**
   * Acquires for {@code holder}, waiting up to {@code waitNanos} (0: one attempt).
   *
   * @return the lease, or null if the lock is held by another owner and the wait is zero
   */
  @Nullable Lease acquire(String name, LockOptions lockOptions, long waitNanos, Object holder) {
    long startedAt = clock.nanoTime();
    try {
      Lease lease = acquireOrWait(name, lockOptions, waitNanos, holder, startedAt);
      if (lease == null) {
        lockEvents.notAcquired(name, LockEventListener.AcquireFailure.TIMEOUT, startedAt);
      }
      return lease;
    } catch (RuntimeException e) {
      lockEvents.notAcquired(name, LockEvents.failureOf(e), startedAt);
      throw e;
    }
  }

  private @Nullable Lease acquireOrWait(
      String name, LockOptions lockOptions, long waitNanos, Object holder, long startedAt) {
    client.ensureOpen();
    if (waitNanos > 0 && Thread.currentThread().isInterrupted()) {
      throw steps.interrupted(name);
    }
    GrantKey key = GrantKey.of(name, lockOptions, holder);
    Lease reentered = steps.reenter(key, lockOptions, startedAt);
    if (reentered != null) {
      return reentered;
    }
    Acquisition a = steps.begin(key, lockOptions, waitNanos, startedAt);
    Lease lease = null;
    try {
      try {
        lease = steps.attempt(a, waitNanos == 0);
        if (lease == null && waitNanos > 0) {
          client.ensureOpen(); // nothing more is sent once the client is closed
          steps.startWaiting(a, null);
          steps.awaitWatching(a);
          while (true) {
            client.ensureOpen();
            lease = steps.retry(a);
            if (lease != null) {
              break;
            }
            // close() marks the client closed, then wakes every waiting thread: either this check
            // (after retry cleared the last signal) sees the mark, or the wake-up comes after it
            // and ends the park below at once.
            client.ensureOpen();
            long park = steps.nextWaitNanos(a);
            if (!a.signalled() && !a.waiter.await(park)) {
              throw steps.interrupted(name);
            }
            steps.afterWait(a);
          }
        }
      } finally {
        steps.end(a, lease);
      }
    } catch (RuntimeException e) {
      throw client.failureOrClosed(e);
    }
    if (lease != null) {
      client.ensureOpenFor(name, lease);
    }
    steps.acquired(a, lease);
    return lease;
  }
}
