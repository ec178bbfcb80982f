package io.dlock.testkit;

import io.dlock.BackendUnavailableException;
import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.SessionBoundHolds;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A backend wrapper that can be cut off: while cut, every call fails as if the network to the
 * server were gone, so the client cannot renew, release or acquire. Cutting a client that holds
 * locks is how the suite simulates a holder that dies without releasing. It also counts calls, and
 * can fire a session event at the moment the server grants, before the core hears of the grant.
 */
public class FaultyBackend extends ForwardingLockBackend {
  private volatile boolean cut;
  private final AtomicInteger acquireCalls = new AtomicInteger();
  private final AtomicInteger releaseCalls = new AtomicInteger();
  private final AtomicInteger renewCalls = new AtomicInteger();
  private final AtomicReference<@Nullable Consumer<BackendEvents>> afterNextGrant =
      new AtomicReference<>();
  private volatile @Nullable BackendEvents events;

  public FaultyBackend(LockBackend delegate) {
    super(delegate);
  }

  /** From now on every call fails with {@link BackendUnavailableException}. */
  public void cut() {
    cut = true;
  }

  /** Calls go through again. */
  public void restore() {
    cut = false;
  }

  /**
   * Fires {@code event} on the core's session-event sink right after the server grants the next
   * acquisition, before the answer reaches the core: a session change racing with a grant.
   */
  public void onNextGrant(Consumer<BackendEvents> event) {
    afterNextGrant.set(event);
  }

  /** The core's session-event sink, to fire events as the backend would. */
  public BackendEvents events() {
    BackendEvents sink = events;
    if (sink == null) {
      throw new IllegalStateException("no client has bound this backend yet");
    }
    return sink;
  }

  /** Always session-bound, whatever the delegate: the tests fire session events through it. */
  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return Optional.of(this);
  }

  @Override
  public void bindEvents(BackendEvents sink) {
    events = sink;
    super.bindEvents(sink);
  }

  public int acquireCalls() {
    return acquireCalls.get();
  }

  public int releaseCalls() {
    return releaseCalls.get();
  }

  public int renewCalls() {
    return renewCalls.get();
  }

  private <T> CompletableFuture<T> unlessCut(Supplier<CompletableFuture<T>> call) {
    if (cut) {
      return CompletableFuture.failedFuture(
          new BackendUnavailableException("connection cut by the test"));
    }
    return call.get();
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner owner, Duration lease) {
    acquireCalls.incrementAndGet();
    return unlessCut(() -> super.tryAcquire(lockName, owner, lease))
        .thenApply(
            answer -> {
              if (answer instanceof AcquireResult.Granted) {
                Consumer<BackendEvents> event = afterNextGrant.getAndSet(null);
                if (event != null) {
                  event.accept(events());
                }
              }
              return answer;
            });
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    releaseCalls.incrementAndGet();
    return unlessCut(() -> super.release(lockName, owner, fencingToken));
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    renewCalls.incrementAndGet();
    return unlessCut(() -> super.renew(leases));
  }

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
    return unlessCut(() -> super.watchReleases(lockName, listener));
  }

  @Override
  public CompletableFuture<Void> abandon(String lockName, LockOwner owner) {
    return unlessCut(() -> super.abandon(lockName, owner));
  }

  /** The delegate's semaphores, cut with the locks. */
  @Override
  public Optional<PermitStore> permits() {
    return super.permits().map(CutPermits::new);
  }

  /** A permit store whose calls fail while the backend is cut. */
  private final class CutPermits implements PermitStore {
    private final PermitStore store;

    CutPermits(PermitStore store) {
      this.store = store;
    }

    @Override
    public CompletableFuture<AcquireResult> tryAcquire(
        String semaphore, int permits, int count, LockOwner owner, Duration lease) {
      acquireCalls.incrementAndGet();
      return unlessCut(() -> store.tryAcquire(semaphore, permits, count, owner, lease));
    }

    @Override
    public CompletableFuture<ReleaseResult> release(
        String semaphore, LockOwner owner, long fencingToken) {
      releaseCalls.incrementAndGet();
      return unlessCut(() -> store.release(semaphore, owner, fencingToken));
    }

    @Override
    public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
      renewCalls.incrementAndGet();
      return unlessCut(() -> store.renew(leases));
    }

    @Override
    public @Nullable CompletableFuture<Void> watchReleases(
        String semaphore, ReleaseListener listener) {
      CompletableFuture<Void> watching = store.watchReleases(semaphore, listener);
      return watching == null ? null : unlessCut(() -> watching);
    }

    @Override
    public void unwatchReleases(String semaphore) {
      store.unwatchReleases(semaphore);
    }

    @Override
    public CompletableFuture<Void> abandon(String semaphore, LockOwner owner) {
      return unlessCut(() -> store.abandon(semaphore, owner));
    }

    @Override
    public CompletableFuture<List<PermitInfo>> holders(String semaphore) {
      return unlessCut(() -> store.holders(semaphore));
    }

    @Override
    public CompletableFuture<Optional<PermitInfo>> forceRelease(
        String semaphore, long fencingToken) {
      return unlessCut(() -> store.forceRelease(semaphore, fencingToken));
    }
  }
}
