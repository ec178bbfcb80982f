package io.dlock.core;

import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A scriptable {@link PermitStore}: it records every call and grants every attempt with a new
 * fencing token unless told otherwise; it keeps no grants of its own.
 */
final class FakePermitStore implements PermitStore {

  record AcquireCall(String semaphore, int permits, int count, LockOwner owner) {}

  record ReleaseCall(String semaphore, LockOwner owner, long fencingToken) {}

  final List<AcquireCall> acquires = new CopyOnWriteArrayList<>();
  final List<ReleaseCall> releases = new CopyOnWriteArrayList<>();
  final List<List<HeldLease>> renewals = new CopyOnWriteArrayList<>();
  final AtomicLong tokens = new AtomicLong();

  volatile Function<AcquireCall, CompletableFuture<AcquireResult>> onAcquire =
      call -> FakeBackend.granted(tokens.incrementAndGet());
  volatile Function<List<HeldLease>, CompletableFuture<Set<HeldLease>>> onRenew =
      leases -> CompletableFuture.completedFuture(Set.of());

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String semaphore, int permits, int count, LockOwner owner, Duration lease) {
    AcquireCall call = new AcquireCall(semaphore, permits, count, owner);
    acquires.add(call);
    return onAcquire.apply(call);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String semaphore, LockOwner owner, long fencingToken) {
    releases.add(new ReleaseCall(semaphore, owner, fencingToken));
    return CompletableFuture.completedFuture(ReleaseResult.RELEASED);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    renewals.add(List.copyOf(leases));
    return onRenew.apply(leases);
  }

  @Override
  public CompletableFuture<List<PermitInfo>> holders(String semaphore) {
    return CompletableFuture.completedFuture(List.of());
  }

  @Override
  public CompletableFuture<Optional<PermitInfo>> forceRelease(String semaphore, long token) {
    return CompletableFuture.completedFuture(Optional.empty());
  }
}
