package io.dlock.core;

import static org.awaitility.Awaitility.await;

import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link MonotonicClock} that stands still until a test moves it. It also counts the reads made
 * by a client's renewal thread, so that a test can wait until the renewer has looked at the clock
 * after it was moved (see {@link #awaitRenewerTick()}) instead of sleeping.
 */
final class FakeClock implements MonotonicClock {
  private final AtomicLong now;
  private final AtomicLong renewerReads = new AtomicLong();

  FakeClock(long startNanos) {
    this.now = new AtomicLong(startNanos);
  }

  FakeClock() {
    this(0);
  }

  @Override
  public long nanoTime() {
    // Counted before the read: a read counted after a test's snapshot sees the time set before it.
    if (Thread.currentThread().getName().endsWith("-renewer")) {
      renewerReads.incrementAndGet();
    }
    return now.get();
  }

  /** The time, without counting as a read of the renewer (for fixtures running on its thread). */
  long peek() {
    return now.get();
  }

  void advance(Duration by) {
    now.addAndGet(by.toNanos());
  }

  void advanceNanos(long nanos) {
    now.addAndGet(nanos);
  }

  void set(long nanos) {
    now.set(nanos);
  }

  /**
   * Waits until at least one whole renewal tick has run at the clock's current time. A tick reads
   * the clock at least twice (its start, the scheduling of the next tick) and at most four times
   * with one batch (plus the send and failure times), so eight reads after this call started
   * include one tick that began and ended after it. The renewer's real-time delays come from the
   * fake times, so tests use leases of a few hundred milliseconds: the next tick is then never more
   * than a third of a lease away.
   */
  void awaitRenewerTick() {
    long seen = renewerReads.get();
    await("a renewal tick at " + now.get() + " ns")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(5))
        .until(() -> renewerReads.get() >= seen + 8);
  }
}
