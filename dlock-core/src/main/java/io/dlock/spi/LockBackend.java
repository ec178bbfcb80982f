package io.dlock.spi;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The primitives a backend implements. All operations are asynchronous and must not block the
 * caller; the core bounds every call with a timeout and handles results that arrive late (an
 * acquisition whose answer came after the caller gave up is released by the core).
 *
 * <p>Owner tokens are chosen by the core: a fresh unguessable token per grant, starting with {@code
 * t:}, or the user's owner id prefixed with {@code o:}. A backend stores the owner with the lock
 * and compares it on release and renewal, atomically on the server. Only {@code o:} owners re-enter
 * (a hold count kept on the server); a {@code t:} owner that asks again for a lock it holds can
 * only be a repeated request (a client library retrying after a reconnect) and must not add a hold.
 *
 * <p>{@link #watchReleases}, {@link #unwatchReleases} and {@link #abandon} must not block: they may
 * be called while the core holds a short internal lock.
 *
 * <p>Failures complete the future exceptionally; a backend should map "cannot reach the server" to
 * {@link io.dlock.BackendUnavailableException}. The core treats any other exception the same way.
 */
public interface LockBackend extends AutoCloseable {

  /** A short name for logs and metrics, such as {@code redis}. */
  String name();

  /**
   * One attempt to take the lock for {@code owner} with a lease of {@code lease}. If {@code owner}
   * already holds it, the backend raises the hold count kept on the server, extends the lease and
   * returns the same fencing token. A new grant increments the name's fencing counter, which never
   * goes backwards.
   */
  CompletableFuture<AcquireResult> tryAcquire(String lockName, String owner, Duration lease);

  /**
   * Lowers {@code owner}'s hold count and deletes the lock when it reaches zero, atomically and
   * only if {@code owner} holds the grant with {@code fencingToken}; wakes the waiters when the
   * lock is deleted.
   *
   * <p>The token matters for owner ids ({@code o:}): one owner id can be granted the same lock
   * again (by another thread or process) after an earlier grant ended on the server behind its
   * holders' backs. A late release of the earlier grant must answer {@link ReleaseResult#NOT_HELD}
   * and leave the newer grant alone, so the server compares the grant's fencing token as well as
   * its owner. (A {@code t:} owner is unique to one grant; comparing its token too is harmless.)
   */
  CompletableFuture<ReleaseResult> release(String lockName, String owner, long fencingToken);

  /**
   * Extends the leases in one batch (one round trip where the backend allows), only where the owner
   * still holds the grant with the lease's fencing token (see {@link #release}).
   *
   * @return the leases that are gone: lock deleted or held by another owner
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases);

  /**
   * Starts delivering release signals of {@code lockName} to {@code listener}. The future completes
   * once no release can be missed any more (for Redis, once the subscription is confirmed). At most
   * one listener per name is registered at a time; the core calls {@link #unwatchReleases(String)}
   * before it registers another.
   */
  CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener);

  /** Stops the release signals of {@code lockName}. */
  void unwatchReleases(String lockName);

  /**
   * Whether {@link #watchReleases} delivers a signal for every release. If false, the core retries
   * waiting acquisitions with capped exponential backoff and jitter instead of relying on signals.
   */
  default boolean signalsReleases() {
    return true;
  }

  /**
   * Whether holds of one owner id made through different clients share one grant, as the SPI
   * describes for {@code o:} owners. False for backends whose locks belong to one connection or
   * session (database session locks, row locks): there an owner id re-enters only within the client
   * that holds the lock, and another client with the same owner id waits like a stranger.
   */
  default boolean sharesOwnerAcrossClients() {
    return true;
  }

  /**
   * The owner's wait for {@code lockName} ended without a grant (given up, timed out, interrupted,
   * or a single attempt that found the lock held). A backend that keeps state for a waiter (a
   * ZooKeeper queue node) removes it here; the default does nothing.
   */
  default CompletableFuture<Void> abandon(String lockName, String owner) {
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Called once by the core, before any other call, with the sink for session events. Backends
   * whose leases do not depend on a session ignore it.
   */
  default void bindEvents(BackendEvents events) {}

  /**
   * The locks held now whose names match {@code namePattern} (a glob: {@code *} any characters,
   * {@code ?} one), for inspection. Optional: the default says the backend cannot.
   */
  default CompletableFuture<java.util.List<io.dlock.LockInfo>> inspect(String namePattern) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException("The " + name() + " backend cannot list its locks"));
  }

  /**
   * Deletes the lock whatever its owner: an administrator's break of a stuck lock. The holder finds
   * out at its next renewal. Optional: the default says the backend cannot.
   *
   * @return the lock as it was just before, or empty if it was not held
   */
  default CompletableFuture<java.util.Optional<io.dlock.LockInfo>> forceRelease(String lockName) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException("The " + name() + " backend cannot force a release"));
  }

  /** Closes connections. Held locks are not released here: the core releases them first. */
  @Override
  void close();
}
