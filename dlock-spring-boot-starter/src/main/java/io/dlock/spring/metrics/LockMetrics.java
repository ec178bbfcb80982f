package io.dlock.spring.metrics;

import io.dlock.LeaseLostEvent;
import java.time.Duration;

/**
 * What the starter reports about the locks it takes. Every method receives the lock's <em>name
 * pattern</em> (the {@code name} of a {@code @DistributedLock}, the registry or job name of an
 * adapter), never the full lock name with its key, so that metrics have a bounded number of tag
 * values.
 */
public interface LockMetrics {

  /** Records nothing. */
  LockMetrics NONE =
      new LockMetrics() {
        @Override
        public void acquired(String lock, Duration latency, Duration waited) {}

        @Override
        public void failed(String lock, FailureCause cause) {}

        @Override
        public void leaseLost(String lock, LeaseLostEvent.Reason reason) {}
      };

  /**
   * A lock was acquired.
   *
   * @param latency from the call to the grant
   * @param waited the part of {@code latency} spent waiting for another holder (zero when the first
   *     attempt got the lock)
   */
  void acquired(String lock, Duration latency, Duration waited);

  /** An acquisition failed. */
  void failed(String lock, FailureCause cause);

  /** A lease taken by the starter was lost while held. */
  void leaseLost(String lock, LeaseLostEvent.Reason reason);

  /** Why an acquisition failed; the {@code cause} tag of {@code dlock.acquire.failures}. */
  enum FailureCause {
    /** The wait ran out while another holder had the lock. */
    TIMEOUT,
    /** The backend could not be reached or did not answer in time. */
    BACKEND_UNAVAILABLE,
    /** The waiting thread was interrupted. */
    INTERRUPTED,
    /** The caller re-entered a grant that was already lost. */
    LEASE_LOST,
    /** Anything else (a bug, an unexpected backend error). */
    ERROR;

    /** The tag value: lower case. */
    public String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }
}
