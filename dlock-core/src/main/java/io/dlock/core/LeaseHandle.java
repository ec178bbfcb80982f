package io.dlock.core;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockLostException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One acquisition: a single-use handle on a {@link Grant}. */
final class LeaseHandle implements Lease {
  private static final Logger log = LoggerFactory.getLogger(LeaseHandle.class);

  private final Grant grant;
  private final AtomicBoolean released = new AtomicBoolean();

  LeaseHandle(Grant grant) {
    this.grant = grant;
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
    return !released.get() && grant.isValid();
  }

  @Override
  public LeaseState state() {
    return released.get() ? LeaseState.RELEASED : grant.state();
  }

  @Override
  public Duration remaining() {
    return released.get() ? Duration.ZERO : grant.remaining();
  }

  @Override
  public void ensureValid() {
    if (released.get()) {
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
              + grant.state().name().toLowerCase(java.util.Locale.ROOT));
    }
  }

  @Override
  public void onLost(Consumer<LeaseLostEvent> listener) {
    grant.addLostListener(Objects.requireNonNull(listener, "listener"));
  }

  @Override
  public boolean release() {
    if (!released.compareAndSet(false, true)) {
      log.info(
          "Lease of lock '{}' (fencing token {}) was already released; nothing to do",
          lockName(),
          fencingToken());
      return false;
    }
    return grant.release(this);
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
