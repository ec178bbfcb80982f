package io.dlock;

import java.time.Duration;
import java.util.Objects;

/**
 * Client-wide settings shared by every backend: the default {@link LockOptions}, the operation
 * timeout that bounds every single backend call, and the monotonic clock. An immutable value.
 */
public final class LockClientOptions {

  /** The longest operation timeout accepted. */
  public static final Duration MAX_OPERATION_TIMEOUT = Duration.ofMinutes(5);

  private static final LockClientOptions DEFAULTS =
      new LockClientOptions(LockOptions.defaults(), Duration.ofSeconds(5), MonotonicClock.SYSTEM);

  private final LockOptions defaultLockOptions;
  private final Duration operationTimeout;
  private final MonotonicClock clock;

  private LockClientOptions(
      LockOptions defaultLockOptions, Duration operationTimeout, MonotonicClock clock) {
    this.defaultLockOptions = defaultLockOptions;
    this.operationTimeout = operationTimeout;
    this.clock = clock;
  }

  /** 30 s renewed leases, a 5 s operation timeout, the system's monotonic clock. */
  public static LockClientOptions defaults() {
    return DEFAULTS;
  }

  /** The same settings with these default lock options. */
  public LockClientOptions withDefaultLockOptions(LockOptions options) {
    return new LockClientOptions(
        Objects.requireNonNull(options, "options"), operationTimeout, clock);
  }

  /**
   * The same settings with this operation timeout: the longest a single backend call (one attempt,
   * a release, a renewal batch) may take before it is reported as {@link
   * BackendUnavailableException}. A wait shorter than this bounds the call instead.
   *
   * @param timeout from 1 ms to {@link #MAX_OPERATION_TIMEOUT}
   */
  public LockClientOptions withOperationTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.compareTo(Duration.ofMillis(1)) < 0
        || timeout.compareTo(MAX_OPERATION_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "operationTimeout must be from PT0.001S to "
              + MAX_OPERATION_TIMEOUT
              + ", but was "
              + timeout);
    }
    return new LockClientOptions(defaultLockOptions, timeout, clock);
  }

  /** The same settings with this clock; for tests of timing logic. */
  public LockClientOptions withClock(MonotonicClock clock) {
    return new LockClientOptions(
        defaultLockOptions, operationTimeout, Objects.requireNonNull(clock, "clock"));
  }

  public LockOptions defaultLockOptions() {
    return defaultLockOptions;
  }

  public Duration operationTimeout() {
    return operationTimeout;
  }

  public MonotonicClock clock() {
    return clock;
  }
}
