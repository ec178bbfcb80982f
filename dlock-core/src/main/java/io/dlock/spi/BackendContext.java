package io.dlock.spi;

import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.Objects;

/**
 * What the core gives a backend when a client starts on it ({@link LockBackend#start}): the
 * client's clock, so that a backend measures every duration (a send time, a local lease end) on the
 * same monotonic clock as the core, and the client's bound for one backend call.
 *
 * @param clock the client's monotonic clock; a backend never calls {@link System#nanoTime()} itself
 * @param operationTimeout how long the core waits for one backend call
 */
public record BackendContext(MonotonicClock clock, Duration operationTimeout) {
  public BackendContext {
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(operationTimeout, "operationTimeout");
  }
}
