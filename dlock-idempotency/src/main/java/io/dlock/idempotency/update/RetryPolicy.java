package io.dlock.idempotency.update;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How often an update is tried, and how long to wait between tries: capped exponential backoff with
 * full jitter (a random wait from zero to {@code min(maxBackoff, initialBackoff * 2^(n-1))} before
 * try {@code n + 1}), so that writers who collided do not collide again in step. An immutable
 * value.
 */
public final class RetryPolicy {
  /** The most tries accepted. */
  public static final int MAX_ATTEMPTS = 1000;

  /** The longest backoff accepted. */
  public static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  private static final RetryPolicy ONCE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO);

  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;

  private RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    this.maxAttempts = maxAttempts;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
  }

  /** One try, no retries. */
  public static RetryPolicy once() {
    return ONCE;
  }

  /**
   * Up to {@code maxAttempts} tries with jittered exponential backoff.
   *
   * @param maxAttempts from 1 to {@value #MAX_ATTEMPTS}
   * @param initialBackoff from zero to {@link #MAX_BACKOFF}
   * @param maxBackoff from {@code initialBackoff} to {@link #MAX_BACKOFF}
   */
  public static RetryPolicy of(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
      throw new IllegalArgumentException(
          "maxAttempts must be from 1 to " + MAX_ATTEMPTS + ", but was " + maxAttempts);
    }
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    if (initialBackoff.isNegative() || initialBackoff.compareTo(MAX_BACKOFF) > 0) {
      throw new IllegalArgumentException(
          "initialBackoff must be from 0 to " + MAX_BACKOFF + ", but was " + initialBackoff);
    }
    if (maxBackoff.compareTo(initialBackoff) < 0 || maxBackoff.compareTo(MAX_BACKOFF) > 0) {
      throw new IllegalArgumentException(
          "maxBackoff must be from initialBackoff ("
              + initialBackoff
              + ") to "
              + MAX_BACKOFF
              + ", but was "
              + maxBackoff);
    }
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff);
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration initialBackoff() {
    return initialBackoff;
  }

  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** The upper bound of the random wait after {@code failedAttempts} tries (1 or more). */
  Duration backoffCap(int failedAttempts) {
    int shift = Math.min(failedAttempts - 1, 30);
    long nanos = initialBackoff.toNanos();
    long capped = nanos > (Long.MAX_VALUE >> shift) ? Long.MAX_VALUE : nanos << shift;
    return Duration.ofNanos(Math.min(capped, maxBackoff.toNanos()));
  }

  /**
   * Waits before the next try (a real backoff wait, not synchronization).
   *
   * @throws UpdateFailedException if interrupted; the interrupt flag is set again
   */
  void backOff(int failedAttempts) {
    long cap = backoffCap(failedAttempts).toNanos();
    if (cap <= 0) {
      return;
    }
    try {
      TimeUnit.NANOSECONDS.sleep(ThreadLocalRandom.current().nextLong(cap + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UpdateFailedException("Interrupted while backing off before a retry", e);
    }
  }

  @Override
  public String toString() {
    return "RetryPolicy[maxAttempts="
        + maxAttempts
        + ", initialBackoff="
        + initialBackoff
        + ", maxBackoff="
        + maxBackoff
        + "]";
  }
}
