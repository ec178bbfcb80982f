package io.dlock.core;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Capped exponential backoff with full jitter, for backends that cannot signal releases: waiters
 * spread their retries instead of polling in step (no herd), and retry sooner while the lock is
 * likely to come free soon.
 */
final class RetryBackoff {
  static final long INITIAL_NANOS = 5_000_000L;
  static final long CAP_NANOS = 500_000_000L;

  private long ceiling = INITIAL_NANOS;

  /** The next pause: uniformly random up to a ceiling that doubles each time, up to the cap. */
  long nextNanos() {
    long pause = ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1);
    ceiling = Math.min(CAP_NANOS, ceiling * 2);
    return pause;
  }
}
