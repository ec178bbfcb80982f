package io.dlock;

import java.time.Duration;
import java.util.List;

/**
 * What a client's locks do, for metrics, tracing and logs: set one with {@link
 * LockClientOptions#withEventListener}, and every lock of the client reports to it, whatever made
 * the client (a backend's factory, {@link LockClients}, the Spring starter).
 *
 * <p>Methods are called on the thread where the event happens (the acquiring or releasing thread;
 * the renewal thread for {@link #renewalFailed}; the client's event thread for {@link #lost}), so
 * they must return quickly and never block. An exception thrown by a method is logged and ignored:
 * a listener can never break a lock. Every method does nothing by default.
 *
 * <p>Lock names carry keys ({@code stock:sku-42}); a metrics listener should map them to a bounded
 * set of tag values.
 */
public interface LockEventListener {

  /** Listens to nothing: the default. */
  LockEventListener NONE = new LockEventListener() {};

  /**
   * One listener that tells each of {@code listeners} in turn (metrics and tracing, say); one that
   * throws does not keep the others from the event. {@link #NONE} for none, the listener itself for
   * one.
   */
  static LockEventListener allOf(List<? extends LockEventListener> listeners) {
    return LockEventListeners.of(List.copyOf(listeners));
  }

  /** See {@link #allOf(List)}. */
  static LockEventListener allOf(LockEventListener... listeners) {
    return allOf(List.of(listeners));
  }

  /**
   * An acquisition found the lock held and starts to wait for it (never for a single attempt). Each
   * call is followed by exactly one {@link #waitEnded} for the same acquisition.
   */
  default void waiting(String lockName) {}

  /**
   * An acquisition that was {@link #waiting} stopped waiting: it got the lock or gave up, which
   * {@link #acquired} or {@link #notAcquired} reports next.
   *
   * @param waited from the start of the wait to its end
   */
  default void waitEnded(String lockName, Duration waited) {}

  /**
   * An acquisition got the lock (a re-entry of a grant this thread holds included).
   *
   * @param latency from the call to the grant
   * @param waited the part of {@code latency} spent waiting for another holder (zero when the first
   *     attempt got the lock)
   */
  default void acquired(String lockName, long fencingToken, Duration latency, Duration waited) {}

  /**
   * An acquisition ended without the lock; the caller gets an empty result or the exception that
   * {@code failure} names.
   *
   * @param latency from the call to the end of the attempt
   */
  default void notAcquired(String lockName, AcquireFailure failure, Duration latency) {}

  /**
   * A hold was released by its holder and the release was confirmed (a release that found the lease
   * lost is reported by {@link #lost}, not here).
   *
   * @param held from the acquisition of this hold to its release
   */
  default void released(String lockName, long fencingToken, Duration held) {}

  /** A grant was lost while held: called once per grant, as its lost listeners are. */
  default void lost(LeaseLostEvent event) {}

  /**
   * A renewal call failed (the backend did not answer in time, or failed); the leases stay valid
   * until their local end and renewal is retried. Reported at every failed call.
   *
   * @param leases how many leases the failed call was to renew
   */
  default void renewalFailed(int leases, RuntimeException failure) {}

  /** Why an acquisition ended without the lock. */
  enum AcquireFailure {
    /** The wait ran out while another holder had the lock (a single attempt found it held). */
    TIMEOUT,
    /** The backend could not be reached or did not answer in time. */
    BACKEND_UNAVAILABLE,
    /** The waiting thread was interrupted (or the asynchronous acquisition cancelled). */
    INTERRUPTED,
    /** The caller re-entered a grant that was already lost. */
    LEASE_LOST,
    /** Anything else: bad input, a closed client, an unexpected backend error. */
    ERROR
  }
}
