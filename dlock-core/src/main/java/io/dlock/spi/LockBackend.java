package io.dlock.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The primitives a backend implements: one acquisition attempt, an owner- and token-checked
 * release, and a batched renewal. Waiting, deadlines, reentrancy, renewal scheduling, lease-end
 * timing, timeouts and listener dispatch are the core's, written once over these.
 *
 * <p>All operations are asynchronous and must not block the caller; the core bounds every call with
 * a timeout and handles results that arrive late (an acquisition whose answer came after the caller
 * gave up is released by the core). Failures complete the future exceptionally; a backend should
 * map "cannot reach the server" to {@link io.dlock.BackendUnavailableException}. The core treats
 * any other exception the same way.
 *
 * <p>The owner ({@link LockOwner}) is chosen by the core. A backend stores {@link LockOwner#key()}
 * with the lock, compares it on release and renewal atomically on the server, and counts holds only
 * when {@link LockOwner#countsHolds()}: a grant owner asking again for a lock it holds is a
 * repeated request and must not add a hold.
 *
 * <p>Abilities beyond the primitives are interfaces that the core asks for once, when a client
 * starts: {@link #releaseSignals()}, {@link #waitQueue()}, {@link #sessionBoundHolds()}, {@link
 * #permits()} and {@link #administration()}. A backend without one returns empty, and the core does
 * without it (backoff instead of signals, no administration); nothing throws {@link
 * UnsupportedOperationException} at run time. Users see them as {@link
 * io.dlock.LockClient#capabilities()}.
 */
public interface LockBackend extends AutoCloseable {

  /** A short name for logs and metrics, such as {@code redis}. */
  String name();

  /**
   * Called once by the core, before any other call but {@link #name()}, the ability accessors and
   * {@link #sharesOwnerIdsAcrossClients()}, with the client's clock and call bound. A backend
   * measures every lease and send time on {@link BackendContext#clock()}. A backend belongs to one
   * client: it may refuse a second start with {@link IllegalStateException}.
   */
  default void start(BackendContext context) {}

  /**
   * One attempt to take the lock for {@code owner} with a lease of {@code lease}. If {@code owner}
   * already holds it, the backend raises the hold count kept on the server (only if {@link
   * LockOwner#countsHolds()}), extends the lease (never shortening it) and returns the same fencing
   * token. A new grant increments the name's fencing counter, which never goes backwards.
   *
   * <p>One acquisition (a call of {@code tryAcquire}, {@code acquire} or {@code acquireAsync} on a
   * lock) passes one {@code LockOwner} instance to each of its attempts and to its {@link
   * WaitQueue#abandon}, and every other acquisition a different instance, even with the same owner
   * id: a backend that keeps state per waiting acquisition tells them apart by identity. The
   * attempts of one acquisition may run on different threads (an asynchronous acquisition's do).
   */
  CompletableFuture<AcquireResult> tryAcquire(String lockName, LockOwner owner, Duration lease);

  /**
   * Lowers {@code owner}'s hold count and deletes the lock when it reaches zero, atomically and
   * only if {@code owner} holds the grant with {@code fencingToken}; wakes the waiters when the
   * lock is deleted.
   *
   * <p>The token matters for owner ids: one owner id can be granted the same lock again (by another
   * thread or process) after an earlier grant ended on the server behind its holders' backs. A late
   * release of the earlier grant must answer {@link ReleaseResult#NOT_HELD} and leave the newer
   * grant alone, so the server compares the grant's fencing token as well as its owner.
   */
  CompletableFuture<ReleaseResult> release(String lockName, LockOwner owner, long fencingToken);

  /**
   * Extends the leases in one batch (one round trip where the backend allows), only where the owner
   * still holds the grant with the lease's fencing token (see {@link #release}).
   *
   * @return the leases that are gone: lock deleted or held by another owner
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases);

  /** Release signals, if the backend has them; without, waiters back off and retry. */
  default Optional<ReleaseSignals> releaseSignals() {
    return Optional.empty();
  }

  /** Per-waiter state on the server (a queue node), if the backend keeps it. */
  default Optional<WaitQueue> waitQueue() {
    return Optional.empty();
  }

  /** Session events, if the backend's holds live in a session or connection. */
  default Optional<SessionBoundHolds> sessionBoundHolds() {
    return Optional.empty();
  }

  /** Leased semaphores, if the backend has them. */
  default Optional<PermitStore> permits() {
    return Optional.empty();
  }

  /** Listing and breaking locks, if the backend can. */
  default Optional<LockAdministration> administration() {
    return Optional.empty();
  }

  /**
   * Whether holds of one owner id made through different clients share one grant, as {@link
   * LockOwner} describes. False for backends whose locks belong to one connection or session
   * (database session locks, row locks, ZooKeeper unless configured): there an owner id re-enters
   * only within the client that holds the lock, and another client with the same owner id waits
   * like a stranger.
   */
  default boolean sharesOwnerIdsAcrossClients() {
    return true;
  }

  /** Closes connections. Held locks are not released here: the core releases them first. */
  @Override
  void close();
}
