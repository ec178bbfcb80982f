package io.dlock.core;

import io.dlock.LockClientOptions;
import io.dlock.LockEventListener;
import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import io.dlock.spi.WaitQueue;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A scriptable {@link LockBackend} on a {@link FakeClock}: it records every call with the fake time
 * it was made at, grants every attempt with a new fencing token unless told otherwise, and has only
 * the optional abilities a test switches on (before the client is created).
 */
final class FakeBackend implements LockBackend {

  record AcquireCall(String lockName, LockOwner owner, Duration lease, long at) {}

  record ReleaseCall(String lockName, LockOwner owner, long fencingToken) {}

  record RenewCall(List<HeldLease> leases, long at) {}

  /** How the backend answers one attempt; runs on the acquiring thread. */
  interface AcquireAnswer {
    CompletableFuture<AcquireResult> answer(AcquireCall call);
  }

  /** How the backend answers one renewal batch; runs on the renewal thread. */
  interface RenewAnswer {
    CompletableFuture<Set<HeldLease>> answer(List<HeldLease> leases);
  }

  final FakeClock clock;
  final List<AcquireCall> acquires = new CopyOnWriteArrayList<>();
  final List<ReleaseCall> releases = new CopyOnWriteArrayList<>();
  final List<RenewCall> renewals = new CopyOnWriteArrayList<>();
  private final AtomicLong tokens = new AtomicLong();
  private final String name;

  volatile AcquireAnswer onAcquire = call -> granted(nextToken());
  volatile RenewAnswer onRenew = leases -> CompletableFuture.completedFuture(Set.of());
  volatile ReleaseResult releaseAnswer = ReleaseResult.RELEASED;

  /** The answer to a release; by default {@link #releaseAnswer}. */
  volatile java.util.function.Function<ReleaseCall, CompletableFuture<ReleaseResult>> onRelease =
      call -> CompletableFuture.completedFuture(releaseAnswer);

  private @Nullable ReleaseSignals releaseSignals;
  private @Nullable WaitQueue waitQueue;
  private @Nullable SessionBoundHolds sessionBoundHolds;
  private @Nullable LockAdministration administration;
  private @Nullable PermitStore permits;
  private boolean sharesOwnerIds = true;
  private volatile @Nullable BackendEvents events;

  FakeBackend(FakeClock clock) {
    this(clock, "fake");
  }

  FakeBackend(FakeClock clock, String name) {
    this.clock = clock;
    this.name = name;
  }

  // ---- abilities, switched on before the client is created -----------------------------------

  /** Holds bound to a session: the core binds its event sink, which {@link #events()} returns. */
  FakeBackend withSessions() {
    sessionBoundHolds = sink -> events = sink;
    return this;
  }

  FakeBackend withReleaseSignals() {
    releaseSignals =
        new ReleaseSignals() {
          @Override
          public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener l) {
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public void unwatchReleases(String lockName) {}
        };
    return this;
  }

  FakeBackend withWaitQueue() {
    waitQueue = (lockName, owner) -> CompletableFuture.completedFuture(null);
    return this;
  }

  FakeBackend withAdministration(List<LockInfo> held) {
    administration =
        new LockAdministration() {
          @Override
          public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
            return CompletableFuture.completedFuture(held);
          }

          @Override
          public CompletableFuture<Optional<LockInfo>> forceRelease(String lockName) {
            return CompletableFuture.completedFuture(Optional.empty());
          }
        };
    return this;
  }

  /** Semaphores the capability tests see; a call of the store fails (nothing here uses it). */
  FakeBackend withPermits() {
    permits =
        new PermitStore() {
          private <T> CompletableFuture<T> unused() {
            return CompletableFuture.failedFuture(new UnsupportedOperationException("fake"));
          }

          @Override
          public CompletableFuture<AcquireResult> tryAcquire(
              String semaphore, int n, int count, LockOwner owner, Duration lease) {
            return unused();
          }

          @Override
          public CompletableFuture<ReleaseResult> release(
              String semaphore, LockOwner owner, long fencingToken) {
            return unused();
          }

          @Override
          public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
            return unused();
          }

          @Override
          public CompletableFuture<List<io.dlock.PermitInfo>> holders(String semaphore) {
            return unused();
          }

          @Override
          public CompletableFuture<Optional<io.dlock.PermitInfo>> forceRelease(
              String semaphore, long fencingToken) {
            return unused();
          }
        };
    return this;
  }

  FakeBackend withoutSharedOwnerIds() {
    sharesOwnerIds = false;
    return this;
  }

  // ---- clients ------------------------------------------------------------------------------

  CoreLockClient client() {
    return client(LockEventListener.NONE);
  }

  CoreLockClient client(LockEventListener listener) {
    return (CoreLockClient)
        CoreLockClient.create(
            this, LockClientOptions.defaults().withClock(clock).withEventListener(listener));
  }

  /** The sink the core bound; only with {@link #withSessions()}. */
  BackendEvents events() {
    return Objects.requireNonNull(events, "the core has not bound session events");
  }

  long nextToken() {
    return tokens.incrementAndGet();
  }

  static CompletableFuture<AcquireResult> granted(long token) {
    return CompletableFuture.completedFuture(new AcquireResult.Granted(token, 1));
  }

  static CompletableFuture<AcquireResult> held(@Nullable Duration holderRemaining) {
    return CompletableFuture.completedFuture(new AcquireResult.Held(holderRemaining));
  }

  // ---- the SPI ------------------------------------------------------------------------------

  @Override
  public String name() {
    return name;
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner owner, Duration lease) {
    AcquireCall call = new AcquireCall(lockName, owner, lease, clock.peek());
    acquires.add(call);
    return onAcquire.answer(call);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    if (closed) {
      // As a real backend's: nothing reaches the server once it is closed.
      return CompletableFuture.failedFuture(new IllegalStateException("the backend is closed"));
    }
    ReleaseCall call = new ReleaseCall(lockName, owner, fencingToken);
    releases.add(call);
    return onRelease.apply(call);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    renewals.add(new RenewCall(List.copyOf(leases), clock.peek()));
    return onRenew.answer(leases);
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.ofNullable(releaseSignals);
  }

  @Override
  public Optional<WaitQueue> waitQueue() {
    return Optional.ofNullable(waitQueue);
  }

  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return Optional.ofNullable(sessionBoundHolds);
  }

  @Override
  public Optional<PermitStore> permits() {
    return Optional.ofNullable(permits);
  }

  @Override
  public Optional<LockAdministration> administration() {
    return Optional.ofNullable(administration);
  }

  @Override
  public boolean sharesOwnerIdsAcrossClients() {
    return sharesOwnerIds;
  }

  @Override
  public void close() {
    closed = true;
  }

  /** Whether {@link #close} was called. */
  volatile boolean closed;
}
