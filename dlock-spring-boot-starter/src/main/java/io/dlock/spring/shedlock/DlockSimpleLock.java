package io.dlock.spring.shedlock;

import io.dlock.Lease;
import io.dlock.LockException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ShedLock lock on a dlock grant: it ends at {@code lockAtMostFor}, even while its job still
 * runs, and this object ends it then (the server's lease may be longer, see {@link ServerLeases}).
 * A successful {@link #extend} hands the grant to a new object with the new end; this one is then
 * done, as {@link #unlock} makes it.
 *
 * <p>Its states: {@code ACTIVE}; {@code EXTENDING} while an extension waits for the server (the end
 * is then left to the extension, which checks it when it fails); {@code LAPSED} once the end came
 * first, the grant released (an {@code unlock} then has nothing left to do, an {@code extend} finds
 * nothing to extend); {@code DONE} after an unlock or an extension.
 */
final class DlockSimpleLock implements SimpleLock {
  private static final Logger log = LoggerFactory.getLogger(DlockSimpleLock.class);

  private enum State {
    ACTIVE,
    EXTENDING,
    LAPSED,
    DONE
  }

  private final DlockLockProvider provider;
  private final Lease lease;

  /** Whether the client renews the grant's lease (a lockAtMostFor too long for a fixed one). */
  private final boolean renewed;

  private final LockConfiguration configuration;

  /** When the lock ends, on the monotonic clock. */
  private final long endNanos;

  /**
   * Longer than any lock needs to last: ShedLock accepts a lockAtMostFor of centuries, more than
   * the monotonic clock's nanoseconds can count.
   */
  private static final Duration FOREVER = Duration.ofDays(100L * 365);

  private final AtomicReference<State> state = new AtomicReference<>(State.ACTIVE);

  /** Completed once the lock lapsed and its grant was released (or the release failed). */
  private final CompletableFuture<Void> lapseReleased = new CompletableFuture<>();

  private volatile @Nullable ScheduledFuture<?> endTimer;

  private DlockSimpleLock(
      DlockLockProvider provider,
      Lease lease,
      boolean renewed,
      LockConfiguration configuration,
      long endNanos) {
    this.provider = provider;
    this.lease = lease;
    this.renewed = renewed;
    this.configuration = configuration;
    this.endNanos = endNanos;
  }

  /**
   * The lock of a grant just made, ending at {@code endNanos}: released at once if that has passed
   * (a lock answered after its {@code lockAtMostFor} has already ended), else at that time.
   */
  static DlockSimpleLock start(
      DlockLockProvider provider,
      Lease lease,
      boolean renewed,
      LockConfiguration configuration,
      long endNanos) {
    DlockSimpleLock lock = new DlockSimpleLock(provider, lease, renewed, configuration, endNanos);
    lock.scheduleEnd();
    return lock;
  }

  private void scheduleEnd() {
    long delay = endNanos - System.nanoTime();
    if (delay <= 0) {
      lapseHere();
      return;
    }
    try {
      endTimer = provider.timer().schedule(this::lapseFromTimer, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The provider is closed: the grant stays with the client, whose close releases it.
      log.debug("ShedLock lock '{}' taken after the provider closed", name());
    }
  }

  /** When a lock that lasts {@code lasting} from {@code nowNanos} ends, on the monotonic clock. */
  static long endAfter(long nowNanos, Duration lasting) {
    return nowNanos + (lasting.compareTo(FOREVER) > 0 ? FOREVER : lasting).toNanos();
  }

  private String name() {
    return configuration.getName();
  }

  /** The end came while the lock is held: releases the grant, on a thread of the provider's. */
  private void lapseFromTimer() {
    if (!state.compareAndSet(State.ACTIVE, State.LAPSED)) {
      return; // unlocked, extended, or an extension under way (it checks the end itself)
    }
    try {
      provider.releases().execute(this::releaseAtEnd);
    } catch (RejectedExecutionException e) {
      releaseAtEnd(); // closed meanwhile: release here rather than not at all
    }
  }

  private void releaseAtEnd() {
    releaseLapsed();
    // Logged after the release, which is due now.
    log.info(
        "ShedLock lock '{}' reached its lockAtMostFor of {} while held: released, its job may run"
            + " elsewhere now",
        name(),
        configuration.getLockAtMostFor());
  }

  /**
   * The end has passed, found by the caller: releases the grant on this thread, so that the lock is
   * free on the server when the caller returns; or waits for the release another thread makes.
   */
  private void lapseHere() {
    if (state.compareAndSet(State.ACTIVE, State.LAPSED)) {
      cancelEndTimer();
      releaseLapsed();
      log.info(
          "ShedLock lock '{}' had passed its lockAtMostFor of {} when it was granted, or when"
              + " it was to be extended: released",
          name(),
          configuration.getLockAtMostFor());
      return;
    }
    if (state.get() == State.LAPSED) {
      lapseReleased.join(); // bounded: a release waits at most the client's operation timeout
    }
  }

  private void releaseLapsed() {
    try {
      lease.release();
    } catch (LockException | IllegalStateException e) {
      // Not confirmed, or the client closed: the server's lease ends the hold.
      log.warn(
          "ShedLock lock '{}' ended but its release failed; it expires with its lease: {}",
          name(),
          e.toString());
    } finally {
      lapseReleased.complete(null);
    }
  }

  private void cancelEndTimer() {
    ScheduledFuture<?> timer = endTimer;
    if (timer != null) {
      timer.cancel(false);
    }
  }

  /**
   * Releases the lock, or keeps it until {@code lockAtLeastFor} has passed and releases it then. A
   * lock whose {@code lockAtMostFor} has passed was released then: nothing is left to do.
   *
   * @throws IllegalStateException if this lock was unlocked or extended before
   */
  @Override
  public void unlock() {
    while (true) {
      State s = state.get();
      if (s == State.ACTIVE && state.compareAndSet(State.ACTIVE, State.DONE)) {
        cancelEndTimer();
        Duration keep = Duration.between(ClockProvider.now(), configuration.getLockAtLeastUntil());
        keep = keep.compareTo(FOREVER) > 0 ? FOREVER : keep;
        provider
            .delayedReleases()
            .releaseAfter(lease, keep, renewed, "ShedLock lock '" + name() + "'");
        return;
      }
      if (s == State.LAPSED && state.compareAndSet(State.LAPSED, State.DONE)) {
        return;
      }
      if (s == State.DONE || s == State.EXTENDING) {
        throw new IllegalStateException(
            "lock '"
                + name()
                + "' already unlocked or extended"
                + (s == State.EXTENDING ? " (an extension is under way)" : ""));
      }
    }
  }

  /**
   * Sets the lock to end {@code lockAtMostFor} from now, on the server too; this lock object is
   * then done and the returned one holds the lock.
   *
   * @return the lock with the new configuration, or empty if the lock has ended ({@code
   *     lockAtMostFor} passed: it is released), was lost, or the backend did not confirm
   * @throws IllegalStateException if this lock was unlocked or extended before
   * @throws IllegalArgumentException if ShedLock refuses the durations ({@code lockAtLeastFor}
   *     longer than {@code lockAtMostFor}), or see {@link ServerLeases#forExtension}
   */
  @Override
  public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
    State s = state.get();
    if (s == State.DONE || s == State.EXTENDING) {
      throw new IllegalStateException("lock '" + name() + "' already unlocked or extended");
    }
    LockConfiguration extended =
        new LockConfiguration(ClockProvider.now(), name(), lockAtMostFor, lockAtLeastFor);
    Duration serverLease = provider.serverLeases().forExtension(name(), lockAtMostFor, renewed);
    if (s == State.LAPSED || System.nanoTime() - endNanos >= 0) {
      lapseHere(); // ended: released here, or waited for the release on the timer's side
      return Optional.empty();
    }
    if (!state.compareAndSet(State.ACTIVE, State.EXTENDING)) {
      if (state.get() == State.LAPSED) { // the end came meanwhile
        lapseHere();
        return Optional.empty();
      }
      throw new IllegalStateException("lock '" + name() + "' already unlocked or extended");
    }
    long newEnd = endAfter(System.nanoTime(), lockAtMostFor);
    try {
      lease.extend(serverLease);
    } catch (LockException | IllegalStateException e) {
      // Lost, not confirmed, or the client closed: this lock goes on as it was, to its own end.
      state.set(State.ACTIVE);
      if (System.nanoTime() - endNanos >= 0) {
        lapseHere();
      }
      log.warn("ShedLock lock '{}' not extended: {}", name(), e.toString());
      return Optional.empty();
    }
    state.set(State.DONE);
    cancelEndTimer();
    return Optional.of(start(provider, lease, renewed, extended, newEnd));
  }
}
