package io.dlock.core;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One acquisition: a single-use handle on a {@link Grant}. */
final class LeaseHandle implements Lease {
  private static final Logger log = LoggerFactory.getLogger(LeaseHandle.class);

  private static final AtomicIntegerFieldUpdater<LeaseHandle> RELEASED =
      AtomicIntegerFieldUpdater.newUpdater(LeaseHandle.class, "released");

  private final Grant grant;

  /**
   * {@link #OPEN}, {@link #RELEASED_BY_HOLDER} or {@link #ENDED_BY_CLOSE}; a field updater instead
   * of an AtomicInteger saves an object per lease.
   */
  private volatile int released;

  private static final int OPEN = 0;
  private static final int RELEASED_BY_HOLDER = 1;

  /** Released by the client's close under its holder: a loss to the holder, not a release. */
  private static final int ENDED_BY_CLOSE = 2;

  /** When this hold was opened, on the client's clock: how long it was held, for the listener. */
  private final long openedNanos;

  LeaseHandle(Grant grant, long openedNanos) {
    this.grant = grant;
    this.openedNanos = openedNanos;
  }

  /** See {@link Grant#onSessionChange}. */
  void onSessionChange(
      java.util.function.Consumer<Boolean> listener, java.util.concurrent.Executor executor) {
    grant.onSessionChange(listener, executor);
  }

  Grant grant() {
    return grant;
  }

  private boolean isReleased() {
    return released == RELEASED_BY_HOLDER;
  }

  @Override
  public String lockName() {
    return grant.lockName();
  }

  @Override
  public long fencingToken() {
    return grant.fencingToken();
  }

  @Override
  public boolean isValid() {
    return released == OPEN && grant.isValid();
  }

  @Override
  public LeaseState state() {
    return isReleased() ? LeaseState.RELEASED : grant.state();
  }

  @Override
  public Duration remaining() {
    return isReleased() ? Duration.ZERO : grant.remaining();
  }

  @Override
  public void ensureValid() {
    if (isReleased()) {
      throw new IllegalStateException(
          "The lease of lock '" + lockName() + "' was released by its holder");
    }
    if (!grant.isValid()) {
      throw new LockLostException(
          "The lease of lock '"
              + lockName()
              + "' (fencing token "
              + fencingToken()
              + ") is "
              + grant.state().name().toLowerCase(Locale.ROOT));
    }
  }

  @Override
  public void onLost(Consumer<LeaseLostEvent> listener) {
    grant.addLostListener(Objects.requireNonNull(listener, "listener"));
  }

  @Override
  public void extend(Duration lease) {
    LockOptions.checkedLease("lease", lease);
    if (isReleased()) {
      throw new IllegalStateException(
          "Cannot extend the lease of lock '" + lockName() + "': it was released by its holder");
    }
    grant.extend(lease.toNanos());
  }

  @Override
  public boolean release() {
    if (!RELEASED.compareAndSet(this, OPEN, RELEASED_BY_HOLDER)) {
      if (released == ENDED_BY_CLOSE) {
        return false; // its holder was told of the loss; the close released it
      }
      log.info(
          "Lease of lock '{}' (fencing token {}) was already released; nothing to do",
          lockName(),
          fencingToken());
      return false;
    }
    boolean done = GrantRelease.release(grant, this);
    if (done) {
      grant.lockEvents().released(lockName(), fencingToken(), openedNanos);
    }
    return done;
  }

  /** {@link #releaseForClose}: its holder released this hold first; close() left it alone. */
  static final int RELEASED_BY_ITS_HOLDER = 0;

  /** {@link #releaseForClose}: released by close(). */
  static final int RELEASED_BY_CLOSE = 1;

  /** {@link #releaseForClose}: close() found the lease lost (its holders were told). */
  static final int FOUND_LOST = 2;

  /**
   * The client closes under this hold: releases it as {@link #release} would, but the holder finds
   * it lost (its state, {@link #ensureValid}), since it did not let go. No {@code released} event:
   * the hold is reported lost instead ({@link GrantClose}), as metrics and tracing count it.
   *
   * @return {@link #RELEASED_BY_ITS_HOLDER}, {@link #RELEASED_BY_CLOSE} or {@link #FOUND_LOST}
   */
  int releaseForClose() {
    if (!RELEASED.compareAndSet(this, OPEN, ENDED_BY_CLOSE)) {
      return RELEASED_BY_ITS_HOLDER;
    }
    return GrantRelease.release(grant, this) ? RELEASED_BY_CLOSE : FOUND_LOST;
  }

  @Override
  public void abandon() {
    if (RELEASED.compareAndSet(this, OPEN, RELEASED_BY_HOLDER)) {
      GrantRelease.abandon(grant, this);
      // The hold ends here for this client: listeners (metrics, tracing) hear of it as a release.
      grant.lockEvents().released(lockName(), fencingToken(), openedNanos);
    }
  }

  @Override
  public void close() {
    release();
  }

  @Override
  public String toString() {
    return "Lease[" + lockName() + ", token=" + fencingToken() + ", " + state() + "]";
  }
}
