package io.dlock.spring.shedlock;

import io.dlock.Lease;
import io.dlock.LockException;
import io.dlock.LockOptions;
import io.dlock.spi.DriverThreads;
import io.dlock.spring.LockAcquirer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * grant, under a fresh owner id, so a second call from the same thread finds the lock held); the
 * lock lasts at most {@code lockAtMostFor} (a fixed lease, never renewed, so a crashed or stuck
 * holder frees it); {@code unlock()} before {@code lockAtLeastFor} has passed keeps the lock and
 * releases it when {@code lockAtLeastFor} ends (a timer of this provider; if this process dies
 * first, the lease still ends at {@code lockAtMostFor}). {@link SimpleLock#extend} is not
 * supported: a fixed dlock lease cannot be extended.
 */
public final class DlockLockProvider implements LockProvider, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DlockLockProvider.class);

  private final LockAcquirer acquirer;
  private final ScheduledExecutorService delayedReleases;

  /**
   * A provider that takes its locks through {@code acquirer}: each job's lock is named after the
   * job, which is also its {@code lock} tag in the metrics.
   */
  public DlockLockProvider(LockAcquirer acquirer) {
    this.acquirer = Objects.requireNonNull(acquirer, "acquirer");
    this.delayedReleases = DriverThreads.timer("dlock-shedlock-release");
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
    Duration atMost = configuration.getLockAtMostFor();
    if (atMost.compareTo(LockOptions.MIN_LEASE) < 0) {
      throw new IllegalArgumentException(
          "lockAtMostFor of '"
              + configuration.getName()
              + "' must be at least "
              + LockOptions.MIN_LEASE
              + ", but was "
              + atMost);
    }
    LockOptions options =
        LockOptions.defaults().withFixedLease(atMost).withOwnerId("shedlock:" + UUID.randomUUID());
    return acquirer
        .tryAcquire(configuration.getName(), null, options)
        .map(lease -> new DlockSimpleLock(lease, configuration));
  }

  /** Releases the locks whose {@code lockAtLeastFor} has not ended yet, at once. */
  @Override
  public void close() {
    for (Runnable pending : delayedReleases.shutdownNow()) {
      pending.run();
    }
  }

  private final class DlockSimpleLock implements SimpleLock {
    private final Lease lease;
    private final LockConfiguration configuration;
    private final AtomicBoolean unlocked = new AtomicBoolean();

    DlockSimpleLock(Lease lease, LockConfiguration configuration) {
      this.lease = lease;
      this.configuration = configuration;
    }

    @Override
    public void unlock() {
      if (!unlocked.compareAndSet(false, true)) {
        throw new IllegalStateException("lock '" + configuration.getName() + "' already unlocked");
      }
      Duration keep = Duration.between(ClockProvider.now(), configuration.getLockAtLeastUntil());
      if (keep.isNegative() || keep.isZero()) {
        release();
      } else {
        delayedReleases.schedule(this::release, keep.toNanos(), TimeUnit.NANOSECONDS);
      }
    }

    private void release() {
      try {
        lease.release();
      } catch (LockException e) {
        log.warn(
            "release of ShedLock lock '{}' failed; it expires after lockAtMostFor: {}",
            configuration.getName(),
            e.toString());
      }
    }
  }
}
