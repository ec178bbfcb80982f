package io.dlock;

/**
 * The clock that measures waits, deadlines and local lease validity: monotonic, never the wall
 * clock, so that a clock step (NTP, a VM resume) neither shortens nor stretches a wait. Injectable
 * so that tests of timing logic can advance time without sleeping. Lease expiry itself is judged by
 * the backend's clock, never this one.
 */
@FunctionalInterface
public interface MonotonicClock {

  /** {@link System#nanoTime()}. */
  MonotonicClock SYSTEM = System::nanoTime;

  /** Nanoseconds from an arbitrary origin; only differences are meaningful. */
  long nanoTime();
}
