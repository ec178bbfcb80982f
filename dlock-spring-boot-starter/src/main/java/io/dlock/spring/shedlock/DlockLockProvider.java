package io.dlock.spring.shedlock;

import io.dlock.Lease;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.spi.DriverThreads;
import io.dlock.spring.DeferredReleases;
import io.dlock.spring.LockAcquirer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link LockProvider} backed by dlock, so that {@code @SchedulerLock} jobs and {@code
 * LockingTaskExecutor} users switch without rewriting, on any dlock backend, with fencing and
 * ownership checks. Extensible: ShedLock's {@code KeepAliveLockProvider} takes it.
 *
 * <p>ShedLock's semantics: one attempt, no waiting; not reentrant (every {@link #lock} is its own
 * grant, so a second call from the same thread finds the lock held); the lock lasts {@code
 * lockAtMostFor} from its configuration's creation, any {@code lockAtMostFor} ShedLock accepts
 * (zero too), and ends then even while its job runs: never renewed. The adapter ends it then
 * itself; the server's lease is the bound should this process die, {@code lockAtMostFor} but at
 * least a few seconds ({@link ServerLeases}). A lock granted after its {@code lockAtMostFor} has
 * already ended: it is released at once, its {@link SimpleLock#extend} finds nothing to extend.
 * {@code unlock()} before {@code lockAtLeastFor} has passed keeps the lock and releases it when
 * {@code lockAtLeastFor} ends; the server's lease is first shortened to end then too (plus at most
 * a second), so that if this process dies meanwhile the lock still frees at about {@code
 * lockAtLeastFor}. {@link SimpleLock#extend} sets the lease anew on the server ({@link
 * Lease#extend}, owner and grant checked there) and returns the lock with the new configuration;
 * empty if the lock has ended, was lost, or the backend did not confirm.
 */
public final class DlockLockProvider implements ExtensibleLockProvider, AutoCloseable {
  private final LockAcquirer acquirer;
  private final ServerLeases serverLeases;
  private final DeferredReleases delayedReleases;

  /** Ends locks at their {@code lockAtMostFor}; its tasks only hand the release on. */
  private final ScheduledExecutorService timer;

  /**
   * Where the releases at {@code lockAtMostFor} wait for the server, one at a time: a release that
   * waits for a backend that does not answer delays the next by at most the operation timeout, and
   * the server's leases bound them all.
   */
  private final ExecutorService releases;

  /**
   * A provider that takes its locks through {@code acquirer}, whose client has the default
   * operation timeout ({@link LockClientOptions#defaults()}); each job's lock is named after the
   * job, which is also its {@code lock} tag in the metrics.
   */
  public DlockLockProvider(LockAcquirer acquirer) {
    this(acquirer, LockClientOptions.defaults().operationTimeout());
  }

  /**
   * A provider that takes its locks through {@code acquirer}, whose client waits at most {@code
   * operationTimeout} for an answer: the server's lease is never shorter, so that every grant
   * answered in time is handed out.
   *
   * @throws IllegalArgumentException if {@code operationTimeout} is not positive or longer than
   *     {@link LockClientOptions#MAX_OPERATION_TIMEOUT}
   */
  public DlockLockProvider(LockAcquirer acquirer, Duration operationTimeout) {
    this.acquirer = Objects.requireNonNull(acquirer, "acquirer");
    this.serverLeases = new ServerLeases(operationTimeout);
    this.delayedReleases = new DeferredReleases("dlock-shedlock-release");
    this.timer = DriverThreads.timer("dlock-shedlock-end");
    // One thread, started now and kept: a release at lockAtMostFor should leave when it is due,
    // not after a thread has been made for it.
    ThreadPoolExecutor releaseThread =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            DriverThreads.daemon("dlock-shedlock-end-release"));
    releaseThread.prestartCoreThread();
    this.releases = releaseThread;
  }

  /**
   * One attempt at the job's lock.
   *
   * @return the lock, or empty if another holder has it
   * @throws io.dlock.BackendUnavailableException if the backend does not answer within the client's
   *     operation timeout; ShedLock then does not run the job
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    long now = System.nanoTime();
    // lockAtMostFor runs from the configuration's creation, as ShedLock's own providers count it;
    // after this one reading of the wall clock, on the monotonic one.
    Duration untilEnd = Duration.between(ClockProvider.now(), configuration.getLockAtMostUntil());
    if (untilEnd.isNegative()) {
      untilEnd = Duration.ZERO;
    }
    long endNanos = DlockSimpleLock.endAfter(now, untilEnd);
    LockOptions options = serverLeases.forGrant(untilEnd);
    // A grant of its own (not reentrant, also on the same thread), without an owner id: its lease
    // is this lock's alone, so it can be extended and shortened and trusted like any other.
    return acquirer
        .acquireOwnGrant(configuration.getName(), null, Duration.ZERO, options)
        .map(
            lease ->
                DlockSimpleLock.start(this, lease, options.autoRenew(), configuration, endNanos));
  }

  /**
   * Leaves the locks whose {@code lockAtLeastFor} has not ended yet held on the server, where their
   * leases end at about that time (shortened at unlock), or at {@code lockAtMostFor} if that could
   * not be done: a graceful shutdown (a deploy) must not let another instance run the job early.
   * Locks still held by their jobs stay with the client, whose close releases them. Where holds
   * belong to a session (ZooKeeper, database session and row locks) they end when the client
   * closes.
   */
  @Override
  public void close() {
    delayedReleases.close();
    timer.shutdownNow();
    releases.shutdown(); // the releases under way finish, each bounded by the operation timeout
  }

  ServerLeases serverLeases() {
    return serverLeases;
  }

  DeferredReleases delayedReleases() {
    return delayedReleases;
  }

  ScheduledExecutorService timer() {
    return timer;
  }

  ExecutorService releases() {
    return releases;
  }
}
