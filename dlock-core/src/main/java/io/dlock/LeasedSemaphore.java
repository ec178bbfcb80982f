package io.dlock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A semaphore shared by every process that names it: at most {@link #permits()} permits are held at
 * once, each grant under a lease that the client renews while its holder lives and that the server
 * ends if the holder dies, so a dead holder's permits come back within their lease.
 *
 * <p>The bound is this handle's, not stored: every acquisition is granted only if the permits held
 * now plus the ones it asks for stay within its bound. Processes that agree on the bound never hold
 * more together. To change it, give the new bound to every process: a lower bound takes effect as
 * permits come back (holders above it keep theirs until they release or lose them); a higher one at
 * once. Processes with different bounds each respect their own, so together they hold at most the
 * highest.
 *
 * <p>Waiters are woken by the backend when permits come back (pub/sub, watches, LISTEN), as lock
 * waiters are. Handles hold no state: make them freely.
 */
public interface LeasedSemaphore {

  /** The highest bound a semaphore can have. */
  int MAX_PERMITS = 100_000;

  /** The semaphore's name. */
  String name();

  /** The bound: at most this many permits are held at once. */
  int permits();

  /** The options of this semaphore's permits: lease time and renewal. */
  LockOptions options();

  /**
   * One attempt to take one permit.
   *
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  default Optional<Permit> tryAcquire() {
    return tryAcquire(1);
  }

  /**
   * One attempt to take {@code count} permits in one grant.
   *
   * @param count 1 to {@link #permits()}
   * @throws IllegalArgumentException if {@code count} is out of that range
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  Optional<Permit> tryAcquire(int count);

  /**
   * Takes one permit, waiting up to {@code wait}.
   *
   * @throws LockTimeoutException if no permit came free within {@code wait}
   * @throws LockInterruptedException if the thread was interrupted while waiting
   * @throws BackendUnavailableException if the backend could not be reached within the wait
   */
  default Permit acquire(Duration wait) {
    return acquire(1, wait);
  }

  /**
   * Takes {@code count} permits in one grant, waiting up to {@code wait}.
   *
   * @param count 1 to {@link #permits()}
   * @throws IllegalArgumentException if {@code count} or {@code wait} is out of range
   * @throws LockTimeoutException if not enough permits came free within {@code wait}
   */
  Permit acquire(int count, Duration wait);

  /**
   * Takes {@code count} permits without blocking the caller; the future fails with {@link
   * LockTimeoutException} if they did not come free within {@code wait}. Cancelling the future
   * gives up the wait (and the permits, if they were granted meanwhile).
   */
  CompletableFuture<Permit> acquireAsync(int count, Duration wait);

  /**
   * The grants held now, in any process, as the backend says.
   *
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  List<PermitInfo> holders();

  /**
   * Breaks the grant with {@code fencingToken} whatever its holder: an administrator's release of
   * stuck permits. The holder is told at its next renewal that its lease is lost.
   *
   * @return the grant as it was just before, or empty if it was not held
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  Optional<PermitInfo> forceRelease(long fencingToken);
}
