package io.dlock;

/**
 * Entry point of dlock: one client per application and backend, created at start-up and closed at
 * shutdown. It hands out named locks, renews the leases it holds from one scheduler, and dispatches
 * lost-lease notices.
 *
 * <p>Closing the client releases every lease it still holds (best effort, each release either done
 * or logged as not done) and stops renewal; leases not released expire on the server after their
 * lease time.
 */
public interface LockClient extends AutoCloseable {

  /**
   * The lock with this name, with the client's default {@link LockOptions}.
   *
   * @param name 1 to {@value LockNames#MAX_LENGTH} characters, no control characters
   * @throws IllegalArgumentException if the name is empty, too long or has control characters
   */
  DistributedLock lock(String name);

  /**
   * The lock with this name and these options (lease time, renewal, owner id).
   *
   * @throws IllegalArgumentException if the name is invalid
   */
  DistributedLock lock(String name, LockOptions options);

  /**
   * This process's candidacy in the leader election {@code name}, with the client's default lock
   * options; it competes once {@link LeaderElection#join() joined}. See {@link LeaderElection}.
   *
   * @throws IllegalArgumentException if the name is invalid, or the default options' lease is fixed
   * @throws IllegalStateException if the client is closed
   */
  default LeaderElection election(String name, LeadershipListener listener) {
    return election(name, LockOptions.defaults(), listener);
  }

  /**
   * This process's candidacy in the leader election {@code name}: its terms are renewed leases of
   * {@code options}' lease time on the lock {@code name}, which other locks must not use.
   *
   * @throws IllegalArgumentException if the name is invalid, the lease is fixed (a term must be
   *     renewed) or the options have an owner id (candidates sharing one would lead together)
   * @throws IllegalStateException if the client is closed
   */
  LeaderElection election(String name, LockOptions options, LeadershipListener listener);

  /**
   * The semaphore {@code name} with a bound of {@code permits}, whose permits are leases of the
   * client's default lock options. See {@link LeasedSemaphore}.
   *
   * @param permits 1 to {@value LeasedSemaphore#MAX_PERMITS}
   * @throws IllegalArgumentException if the name is invalid or {@code permits} out of range, or the
   *     default options have an owner id
   * @throws UnsupportedOperationException if the backend has no semaphores ({@link #capabilities()}
   *     lacks {@link BackendCapability#SEMAPHORES}), naming what has them
   * @throws IllegalStateException if the client is closed
   */
  default LeasedSemaphore semaphore(String name, int permits) {
    return semaphore(name, permits, LockOptions.defaults());
  }

  /**
   * The semaphore {@code name} with a bound of {@code permits}, whose permits are leases of {@code
   * options} (lease time, renewal). Semaphore names are apart from lock names: the semaphore and
   * the lock {@code "jobs"} are two things.
   *
   * @throws IllegalArgumentException if the name is invalid, {@code permits} out of range, or the
   *     options have an owner id (a permit is never shared)
   * @throws UnsupportedOperationException if the backend has no semaphores
   * @throws IllegalStateException if the client is closed
   */
  LeasedSemaphore semaphore(String name, int permits, LockOptions options);

  /**
   * The grants this client holds now (released and lost grants are not listed, except lost grants
   * whose holder has not released them yet).
   */
  java.util.List<HeldLeaseInfo> heldLeases();

  /**
   * The locks held now, by any client, whose names match {@code namePattern} (a glob: {@code *} any
   * characters, {@code ?} one character).
   *
   * @throws UnsupportedOperationException if the backend cannot list its locks: {@link
   *     #capabilities()} lacks {@link BackendCapability#ADMINISTRATION} (every built-in backend has
   *     it)
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  java.util.List<LockInfo> inspect(String namePattern);

  /**
   * Deletes a lock whatever its owner: an administrator's break of a stuck lock. Its holder is told
   * at its next renewal that the lease is lost; waiters are woken.
   *
   * @return the lock as it was just before, or empty if nobody held it
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link
   *     BackendCapability#ADMINISTRATION}
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  java.util.Optional<LockInfo> forceRelease(String name);

  /**
   * What this client's backend can do beyond the guarantees every backend gives; never changes.
   *
   * @throws BackendUnavailableException if the client started without its server ({@link
   *     LockClients#connectLater}) and has not connected within the operation timeout: the
   *     backend's abilities are known once it answers
   */
  java.util.Set<BackendCapability> capabilities();

  /** A short name of the backend, for logs and metrics: {@code redis}, {@code zookeeper}, ... */
  String backendName();

  /** Releases every lease still held by this client, stops renewal and closes the backend. */
  @Override
  void close();
}
