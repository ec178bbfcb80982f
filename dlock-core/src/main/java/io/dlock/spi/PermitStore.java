package io.dlock.spi;

import io.dlock.PermitInfo;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * An optional ability: leased semaphores. A semaphore is a name with a bound of {@code permits}
 * held at once; each grant takes {@code count} of them under a lease of its own, kept by the server
 * exactly as a lock's: an owner key compared on release and renewal, a fencing token from the
 * semaphore's counter (which never goes backwards), and an end judged by the server's clock.
 *
 * <p>The bound is not stored: every acquisition brings its own, and the server grants it only if
 * the permits held now (leases not ended) plus {@code count} do not exceed it. So processes that
 * use one bound never hold more together, a lowered bound takes effect as permits come back, and
 * holders above it keep theirs until they release or lose them.
 *
 * <p>The core keeps time, waiting, renewal and loss signals for permits as it does for locks: it
 * calls these methods as it calls {@link LockBackend}'s, with a fresh {@link LockOwner grant owner}
 * (never an owner id: a permit is never re-entered) per acquisition, and renews permits in the
 * renewer's batches. Semaphore names and lock names are separate namespaces: a backend keeps a
 * semaphore apart from the lock of the same name. A backend with {@link SessionBoundHolds} reports
 * a permit that died on its own with {@link BackendEvents#leaseLost} under the semaphore's name and
 * the permit owner's key.
 */
public interface PermitStore {

  /**
   * One attempt to take {@code count} permits of {@code semaphore} for {@code owner}. A repeated
   * request of an owner that holds permits already (a client library re-sending) extends its lease
   * and returns the same token, adding nothing.
   *
   * @param permits the bound the acquirer uses, at least 1
   * @param count the permits to take, 1 to {@code permits}
   * @return {@link AcquireResult.Granted} with hold count 1, or {@link AcquireResult.Held} with the
   *     time until the soonest lease among the holders ends (null if the backend cannot tell)
   */
  CompletableFuture<AcquireResult> tryAcquire(
      String semaphore, int permits, int count, LockOwner owner, Duration lease);

  /**
   * Gives the owner's permits back, atomically and only if it holds the grant with {@code
   * fencingToken}; wakes waiters when it does.
   *
   * @return {@link ReleaseResult#RELEASED}, or {@link ReleaseResult#NOT_HELD} (lease ended, broken,
   *     or released before): nothing else changes
   */
  CompletableFuture<ReleaseResult> release(String semaphore, LockOwner owner, long fencingToken);

  /**
   * Extends permit leases ({@link HeldLease#lockName()} is the semaphore's name) where the owner
   * still holds the grant with the lease's token, in one batch where the backend allows.
   *
   * @return the leases that are gone
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases);

  /**
   * Starts delivering release signals of {@code semaphore}, as {@link ReleaseSignals#watchReleases}
   * does for a lock; null if the backend has none (waiters then back off and retry). At most one
   * listener per semaphore at a time.
   */
  default @Nullable CompletableFuture<Void> watchReleases(
      String semaphore, ReleaseListener listener) {
    return null;
  }

  /** Stops the release signals of {@code semaphore}. */
  default void unwatchReleases(String semaphore) {}

  /**
   * The owner's wait for {@code semaphore} ended without a grant: remove its waiter state, if the
   * backend keeps any (as {@link WaitQueue#abandon}). Must not block.
   */
  default CompletableFuture<Void> abandon(String semaphore, LockOwner owner) {
    return CompletableFuture.completedFuture(null);
  }

  /** The grants of {@code semaphore} whose lease has not ended, by fencing token. */
  CompletableFuture<List<PermitInfo>> holders(String semaphore);

  /**
   * Deletes the grant with {@code fencingToken} whatever its owner: an administrator's break. Its
   * holder finds out at its next renewal.
   *
   * @return the grant as it was just before, or empty if no such grant was held
   */
  CompletableFuture<Optional<PermitInfo>> forceRelease(String semaphore, long fencingToken);
}
