package io.dlock.core;

import io.dlock.MonotonicClock;
import java.time.Duration;

/**
 * A point on the monotonic clock. Compared by subtraction, as {@link System#nanoTime()} requires,
 * and saturated so that very long waits ("forever") do not overflow.
 */
final class Deadline {
  /** Longer waits are treated as unbounded: about 73 years. */
  static final long MAX_NANOS = Long.MAX_VALUE / 4;

  private final MonotonicClock clock;
  private final long at;

  private Deadline(MonotonicClock clock, long at) {
    this.clock = clock;
    this.at = at;
  }

  static Deadline after(MonotonicClock clock, Duration wait) {
    return new Deadline(clock, clock.nanoTime() + toNanosSaturated(wait));
  }

  /** The deadline {@code wait} after {@code startedAt}, a reading of {@code clock}. */
  static Deadline after(MonotonicClock clock, long startedAt, Duration wait) {
    return new Deadline(clock, startedAt + toNanosSaturated(wait));
  }

  static long toNanosSaturated(Duration d) {
    if (d.compareTo(Duration.ofNanos(MAX_NANOS)) >= 0) {
      return MAX_NANOS;
    }
    return d.toNanos();
  }

  /** Nanoseconds left, zero or negative once passed. */
  long remainingNanos() {
    return at - clock.nanoTime();
  }

  boolean passed() {
    return remainingNanos() <= 0;
  }
}
