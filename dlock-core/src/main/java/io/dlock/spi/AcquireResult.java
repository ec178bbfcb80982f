package io.dlock.spi;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** The answer to one acquisition attempt: granted, or held by someone else. */
public sealed interface AcquireResult {

  /**
   * The lock is now held by the requesting owner.
   *
   * @param fencingToken the grant's fencing token (unchanged for a re-entry by the same owner)
   * @param holdCount the hold count kept on the server after this attempt
   * @param leaseStartedAfterNanos how long after the backend's {@code tryAcquire} was called the
   *     request that started the grant's lease on the server was sent, measured with {@link
   *     System#nanoTime()}, or 0 when the lease began with the call's first request. The core
   *     counts the lease from the call, moved by this much: a backend whose grant takes several
   *     round trips before the one that sets the lease (a JDBC transaction) would otherwise spend
   *     them out of the lease, and over a slow network hand out grants already over. It must never
   *     be later than that request's send: the server's lease cannot have begun before it
   */
  record Granted(long fencingToken, int holdCount, long leaseStartedAfterNanos)
      implements AcquireResult {
    public Granted {
      if (leaseStartedAfterNanos < 0) {
        throw new IllegalArgumentException(
            "leaseStartedAfterNanos must be 0 or more, got " + leaseStartedAfterNanos);
      }
    }

    /** A grant whose lease began with the call's first request. */
    public Granted(long fencingToken, int holdCount) {
      this(fencingToken, holdCount, 0);
    }
  }

  /**
   * Another owner holds the lock.
   *
   * @param holderRemaining how long the holder's lease lasts at most without renewal, as judged by
   *     the server; null if the backend cannot tell (the core then waits for a release signal)
   */
  record Held(@Nullable Duration holderRemaining) implements AcquireResult {}
}
