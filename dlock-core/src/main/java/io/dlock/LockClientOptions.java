package io.dlock;

import java.time.Duration;
import java.util.Objects;

/**
 * Client-wide settings shared by every backend: the default {@link LockOptions}, the operation
 * timeout that bounds every single backend call, the monotonic clock and the listener of lock
 * events. An immutable value.
 */
public final class LockClientOptions {

  /** The longest operation timeout accepted. */
  public static final Duration MAX_OPERATION_TIMEOUT = Duration.ofMinutes(5);

  private static final LockClientOptions DEFAULTS =
      new LockClientOptions(
          LockOptions.defaults(),
          Duration.ofSeconds(5),
          MonotonicClock.SYSTEM,
          LockEventListener.NONE);

  private final LockOptions defaultLockOptions;
  private final Duration operationTimeout;
  private final MonotonicClock clock;
  private final LockEventListener eventListener;

  private LockClientOptions(
      LockOptions defaultLockOptions,
      Duration operationTimeout,
      MonotonicClock clock,
      LockEventListener eventListener) {
    this.defaultLockOptions = defaultLockOptions;
    this.operationTimeout = operationTimeout;
    this.clock = clock;
    this.eventListener = eventListener;
  }

  /** 30 s renewed leases, a 5 s operation timeout, the system's monotonic clock, no listener. */
  public static LockClientOptions defaults() {
    return DEFAULTS;
  }

  /** The same settings with these default lock options. */
  public LockClientOptions withDefaultLockOptions(LockOptions options) {
    return new LockClientOptions(
        Objects.requireNonNull(options, "options"), operationTimeout, clock, eventListener);
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
    return new LockClientOptions(defaultLockOptions, timeout, clock, eventListener);
  }

  /** The same settings with this clock; for tests of timing logic. */
  public LockClientOptions withClock(MonotonicClock clock) {
    return new LockClientOptions(
        defaultLockOptions,
        operationTimeout,
        Objects.requireNonNull(clock, "clock"),
        eventListener);
  }

  /**
   * The same settings with this listener of every lock event of the client (acquisitions, waits,
   * releases, losses, failed renewals): one listener; to have several, combine them in one.
   */
  public LockClientOptions withEventListener(LockEventListener listener) {
    return new LockClientOptions(
        defaultLockOptions, operationTimeout, clock, Objects.requireNonNull(listener, "listener"));
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

  public LockEventListener eventListener() {
    return eventListener;
  }
}
