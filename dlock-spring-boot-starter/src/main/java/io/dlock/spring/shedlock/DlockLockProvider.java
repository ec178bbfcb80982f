package io.dlock.spring.shedlock;

import io.dlock.Lease;
import io.dlock.LockException;
import io.dlock.LockOptions;
import io.dlock.spring.DeferredReleases;
import io.dlock.spring.LockAcquirer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link LockProvider} backed by dlock, so that {@code @SchedulerLock} jobs and {@code
 * LockingTaskExecutor} users switch without rewriting, on any dlock backend, with fencing and
 * ownership checks.
 *
 * <p>ShedLock's semantics: one attempt, no waiting; not reentrant (every {@link #lock} is its own
 * grant, so a second call from the same thread finds the lock held); the lock lasts at most {@code
 * lockAtMostFor} (a fixed lease, never renewed, so a crashed or stuck holder frees it); {@code
 * unlock()} before {@code lockAtLeastFor} has passed keeps the lock and releases it when {@code
 * lockAtLeastFor} ends; the server's lease is first shortened to end then too (plus at most a
 * second, so that the release always comes first), so that if this process dies meanwhile the lock
 * still frees at about {@code lockAtLeastFor}, not {@code lockAtMostFor}. {@link SimpleLock#extend}
 * sets the lease anew on the server ({@link Lease#extend}, owner and grant checked there) and
 * returns the lock with the new configuration; empty if the lease was lost or the backend did not
 * confirm.
 */
public final class DlockLockProvider implements LockProvider, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DlockLockProvider.class);

  private final LockAcquirer acquirer;
  private final DeferredReleases delayedReleases;

  /**
   * A provider that takes its locks through {@code acquirer}: each job's lock is named after the
   * job, which is also its {@code lock} tag in the metrics.
   */
  public DlockLockProvider(LockAcquirer acquirer) {
    this.acquirer = Objects.requireNonNull(acquirer, "acquirer");
    this.delayedReleases = new DeferredReleases("dlock-shedlock-release");
  }

  /**
   * One attempt at the job's lock.
   *
   * @throws IllegalArgumentException if {@code lockAtMostFor} is shorter than {@link
   *     LockOptions#MIN_LEASE}
   * @throws io.dlock.BackendUnavailableException if the backend does not answer; ShedLock then does
   *     not run the job
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    Duration atMost = checkedAtMost(configuration.getName(), configuration.getLockAtMostFor());
    // A grant of its own (not reentrant, also on the same thread), without an owner id: its lease
    // is this lock's alone, so it can be extended and shortened and trusted like any other.
    LockOptions options = LockOptions.defaults().withFixedLease(atMost);
    return acquirer
        .acquireOwnGrant(configuration.getName(), null, Duration.ZERO, options)
        .map(lease -> new DlockSimpleLock(lease, configuration));
  }

  /** {@code atMost}, if a lease can be that long. */
  private static Duration checkedAtMost(String name, Duration atMost) {
    if (atMost.compareTo(LockOptions.MIN_LEASE) < 0) {
      throw new IllegalArgumentException(
          "lockAtMostFor of '"
              + name
              + "' must be at least "
              + LockOptions.MIN_LEASE
              + ", but was "
              + atMost);
    }
    return atMost;
  }

  /**
   * Leaves the locks whose {@code lockAtLeastFor} has not ended yet held on the server, where their
   * leases end at about that time (shortened at unlock), or at {@code lockAtMostFor} if that could
   * not be done: a graceful shutdown (a deploy) must not let another instance run the job early.
   * Releasing them here (as before) freed them at once (found by review). Where holds belong to a
   * session (ZooKeeper, database session and row locks) they still end when the client closes.
   */
  @Override
  public void close() {
    delayedReleases.close();
  }

  private final class DlockSimpleLock implements SimpleLock {
    private final Lease lease;
    private final LockConfiguration configuration;

    /** Set by unlock or extend: either ends this lock object (an extension returns a new one). */
    private final AtomicBoolean unlocked = new AtomicBoolean();

    DlockSimpleLock(Lease lease, LockConfiguration configuration) {
      this.lease = lease;
      this.configuration = configuration;
    }

    @Override
    public void unlock() {
      if (!unlocked.compareAndSet(false, true)) {
        throw new IllegalStateException(
            "lock '" + configuration.getName() + "' already unlocked or extended");
      }
      Duration keep = Duration.between(ClockProvider.now(), configuration.getLockAtLeastUntil());
      delayedReleases.releaseAfter(
          lease, keep, false, "ShedLock lock '" + configuration.getName() + "'");
    }

    /**
     * Sets the lease to {@code lockAtMostFor} from now on the server; this lock object is then done
     * and the returned one holds the lock.
     *
     * @return the lock with the new configuration, or empty if the lease was lost or the backend
     *     did not confirm (ShedLock then treats the lock as not extended)
     */
    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
      checkedAtMost(configuration.getName(), lockAtMostFor);
      if (unlocked.get()) {
        throw new IllegalStateException(
            "lock '" + configuration.getName() + "' already unlocked or extended");
      }
      LockConfiguration extended =
          new LockConfiguration(
              ClockProvider.now(), configuration.getName(), lockAtMostFor, lockAtLeastFor);
      try {
        lease.extend(lockAtMostFor);
      } catch (LockException e) {
        log.warn("ShedLock lock '{}' not extended: {}", configuration.getName(), e.toString());
        return Optional.empty();
      }
      if (!unlocked.compareAndSet(false, true)) {
        throw new IllegalStateException(
            "lock '" + configuration.getName() + "' already unlocked or extended");
      }
      return Optional.of(new DlockSimpleLock(lease, extended));
    }
  }
}
