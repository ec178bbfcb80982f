package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.LeaseLostEvent;
import io.dlock.MonotonicClock;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The trusted ends of a client's grants, for its renewal thread: which has passed (the grant is
 * then marked lost), which comes next, and a wait for a backend call that marks them lost as they
 * pass. Only the renewal thread calls it; the grants are the client's live view.
 */
final class LeaseEnds {
  private final Collection<Grant> grants;
  private final MonotonicClock clock;
  private final String backendName;

  LeaseEnds(Collection<Grant> grants, MonotonicClock clock, String backendName) {
    this.grants = grants;
    this.clock = clock;
    this.backendName = backendName;
  }

  /** Marks {@code grant} lost if its trusted end has passed; returns whether it had. */
  static boolean markLostIfEnded(Grant grant, long now) {
    if (grant.validUntilNanos() - now > 0) {
      return false;
    }
    if (grant.autoRenew()) {
      grant.markLost(
          LeaseLostEvent.Reason.EXPIRED,
          "no renewal got through before the lease of " + grant.leaseTime() + " ran out");
    } else {
      grant.markLost(
          LeaseLostEvent.Reason.LEASE_ENDED,
          "the fixed lease of " + grant.leaseTime() + " ended before release");
    }
    return true;
  }

  /**
   * Waits for a renewal or extension call, at most {@code timeoutNanos}, and meanwhile marks lost,
   * at its end, every grant whose trusted end passes (fixed or renewed, in the call or not). All
   * ticks share this one thread: a call under way must not hold back the loss signal of a lease
   * that ends meanwhile (found by the fault-injection suite: a holder cut off from Redis was told
   * of its loss up to a third of a lease late), nor be cut short by it (found by review: bounded by
   * the next lease end instead, fixed leases ending every few milliseconds gave renewal calls
   * timeouts of a millisecond, and healthy renewed leases were marked lost).
   */
  <T> T await(CompletableFuture<T> call, long timeoutNanos, String operation) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + timeoutNanos;
    try {
      while (true) {
        long left = deadline - System.nanoTime();
        long now = clock.nanoTime();
        long end = earliest(now);
        long slice = end == Long.MAX_VALUE ? left : Math.min(left, end - now);
        try {
          return call.get(Math.max(0, slice), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          if (deadline - System.nanoTime() <= 0) {
            throw noAnswer(operation, timeoutNanos);
          }
          long at = clock.nanoTime();
          for (Grant grant : grants) {
            if (!grant.hasEnded()) {
              markLostIfEnded(grant, at);
            }
          }
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException | CompletionException | CancellationException e) {
          throw BackendCalls.translate(
              e.getCause() == null ? e : e.getCause(), operation, backendName);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The failure of a call that was not answered within {@code timeoutNanos}. */
  BackendUnavailableException noAnswer(String operation, long timeoutNanos) {
    return new BackendUnavailableException(
        "No answer from the "
            + backendName
            + " backend to '"
            + operation
            + "' within "
            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
            + " ms");
  }

  /**
   * Waits until one of {@code calls} is answered (or failed), at most {@code timeoutNanos}, marking
   * grants lost at their ends meanwhile as {@link #await} does; the caller looks at each call
   * afterwards.
   */
  void awaitAny(List<? extends CompletableFuture<?>> calls, long timeoutNanos) {
    CompletableFuture<Object> any =
        CompletableFuture.anyOf(calls.toArray(new CompletableFuture<?>[0]));
    try {
      await(any, timeoutNanos, "renew");
    } catch (RuntimeException e) {
      // One failed, or none answered in time: the caller finds out which.
    }
  }

  /** The earliest lease end among the grants that have not ended, or Long.MAX_VALUE. */
  long earliest(long now) {
    long earliest = Long.MAX_VALUE;
    for (Grant grant : grants) {
      if (grant.hasEnded()) {
        continue;
      }
      long end = grant.validUntilNanos();
      if (end - now > 0 && (earliest == Long.MAX_VALUE || end - earliest < 0)) {
        earliest = end;
      }
    }
    return earliest;
  }
}
