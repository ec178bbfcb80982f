package io.dlock.torture;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's requests that a worker close its client at its next hold (the {@code
 * client-close} fault): a {@code close} line on the worker's standard input asks, {@code
 * never-mind} withdraws a request not acted on yet. The worker's work waits on it, so a request
 * cuts the work short.
 */
final class CloseRequests {
  private final Semaphore requests = new Semaphore(0);

  /** The coordinator asks for a close (from the thread that reads standard input). */
  void request() {
    requests.release();
  }

  /** The coordinator gave up waiting for the close it asked for: it is not to happen later. */
  void withdraw() {
    requests.drainPermits();
  }

  /**
   * The work of a hold: waits {@code millis}, or less if a close is asked for meanwhile (or was
   * before). Returns whether it was: the caller then closes its client while it holds.
   */
  boolean await(long millis) throws InterruptedException {
    return requests.tryAcquire(millis, TimeUnit.MILLISECONDS);
  }
}
