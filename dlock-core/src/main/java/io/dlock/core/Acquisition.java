package io.dlock.core;

import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import io.dlock.spi.LockOwner;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition call: its lock and owner, its deadline, and what its last failed attempt saw. A
 * blocking call runs it on the caller's thread ({@link Acquisitions#acquire}); an asynchronous one
 * in steps ({@link AsyncAcquisition}); both through the methods of {@link Acquisitions}.
 */
final class Acquisition {
  final GrantKey key;
  final String name;
  final LockOwner owner;
  final LockOptions lockOptions;
  final long waitNanos;
  final long startedAt;
  final Deadline deadline;

  /** When the wait began on the client's clock (never 0), or 0 if it did not wait. */
  long waitStartedAt;

  /** The holder's remaining lease seen by the last failed attempt, if the backend told it. */
  @Nullable Duration holderRemaining;

  /** Null where the backend signals releases; otherwise the next retry's delay. */
  @Nullable RetryBackoff backoff;

  ReleaseWaiters.@Nullable Waiter waiter;

  /** Whether a single attempt has asked once more after its grant was answered stale. */
  boolean askedAgainAfterStaleGrant;

  /**
   * What is left, for asking once more, of the single attempt's operation timeout (real time, as
   * the waits for answers): the second request shares the first one's bound.
   */
  long askAgainWithinNanos;

  Acquisition(
      MonotonicClock clock, GrantKey key, LockOptions lockOptions, long waitNanos, long startedAt) {
    this.key = key;
    this.name = key.lockName();
    this.lockOptions = lockOptions;
    this.waitNanos = waitNanos;
    this.startedAt = startedAt;
    this.owner = lockOptions.ownerId().map(LockOwner::ofOwnerId).orElseGet(OwnerTokens::next);
    // From the call, not from this step: an asynchronous acquisition may wait for a free thread.
    this.deadline = Deadline.after(clock, startedAt, Duration.ofNanos(waitNanos));
  }

  boolean signalled() {
    ReleaseWaiters.Waiter w = waiter;
    return w != null && w.signalled;
  }
}
