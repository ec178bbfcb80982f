package io.dlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;

/**
 * A named lock shared by every process that uses the same backend and name. Instances are cheap,
 * immutable views: two instances with the same name and holder are the same lock.
 *
 * <p>Reentrancy: without an {@linkplain LockOptions#ownerId() owner id}, the holder is the calling
 * thread, and a thread that acquires a lock it already holds gets the same grant (same fencing
 * token) with its hold count raised, without a round trip to the backend. With an owner id, every
 * thread or process that passes the same owner id re-enters the same grant, and the hold count is
 * kept on the server. Every acquisition returns its own {@link Lease}, and each must be released.
 */
public interface DistributedLock {

  /** The lock's name. */
  String name();

  /** The options this view acquires with. */
  LockOptions options();

  /**
   * One attempt, no waiting.
   *
   * @return the lease, or empty if another holder has the lock
   * @throws BackendUnavailableException if the backend did not answer within the client's operation
   *     timeout
   * @throws LockLostException if the calling holder re-enters a grant that was already lost
   */
  Optional<Lease> tryAcquire();

  /**
   * Acquires the lock, waiting at most {@code wait} for it. Waiting is woken by the backend when
   * the holder releases (or when the holder's lease runs out), not by polling.
   *
   * @param wait how long to wait, {@code >= 0}; zero makes one attempt
   * @return the lease, never null
   * @throws LockTimeoutException if the lock was not acquired within {@code wait}
   * @throws LockInterruptedException if the thread was interrupted; the interrupt flag stays set
   *     and nothing is held
   * @throws BackendUnavailableException if the backend cannot be reached; thrown within the wait
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed, also when it closes during the wait
   *     (nothing is then held)
   */
  Lease acquire(Duration wait);

  /**
   * Acquires asynchronously, waiting at most {@code wait}. The future completes with the lease, or
   * exceptionally with the exceptions of {@link #acquire(Duration)}. Cancelling the future stops
   * the wait; a lease granted after cancellation is released at once, so cancellation leaves
   * nothing held.
   *
   * <p>An asynchronous acquisition is never reentrant by thread: each is its own grant. Use an
   * {@linkplain LockOptions#ownerId() owner id} to re-enter from a call chain.
   */
  CompletableFuture<Lease> acquireAsync(Duration wait);

  /** Whether the calling thread (or this view's owner id) holds a valid lease of this lock. */
  boolean isHeldByCurrentHolder();

  /**
   * A {@link Lock} view of this lock, for code written against {@code java.util.concurrent}. Its
   * {@code unlock()} releases the calling thread's most recent hold. {@code newCondition()} is
   * refused: a condition cannot be distributed through this lock.
   */
  Lock asLock();
}
