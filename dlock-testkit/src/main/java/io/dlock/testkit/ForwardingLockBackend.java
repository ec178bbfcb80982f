package io.dlock.testkit;

import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A backend that forwards every call to another; subclasses override what they change. It has
 * exactly the abilities of its delegate, and routes each ability's calls through its own methods
 * (so that a subclass can change {@link #watchReleases} as it changes {@link #tryAcquire}).
 */
public abstract class ForwardingLockBackend
    implements LockBackend, ReleaseSignals, WaitQueue, SessionBoundHolds, LockAdministration {
  private final LockBackend delegate;

  protected ForwardingLockBackend(LockBackend delegate) {
    this.delegate = delegate;
  }

  protected LockBackend delegate() {
    return delegate;
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public void start(BackendContext context) {
    delegate.start(context);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner owner, Duration lease) {
    return delegate.tryAcquire(lockName, owner, lease);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    return delegate.release(lockName, owner, fencingToken);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return delegate.renew(leases);
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return delegate.releaseSignals().map(signals -> this);
  }

  @Override
  public Optional<WaitQueue> waitQueue() {
    return delegate.waitQueue().map(queue -> this);
  }

  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return delegate.sessionBoundHolds().map(sessions -> this);
  }

  /** The delegate's semaphores, as they are (faults injected here reach locks only). */
  @Override
  public Optional<PermitStore> permits() {
    return delegate.permits();
  }

  @Override
  public Optional<LockAdministration> administration() {
    return delegate.administration().map(administration -> this);
  }

  @Override
  public boolean sharesOwnerIdsAcrossClients() {
    return delegate.sharesOwnerIdsAcrossClients();
  }

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
    return delegate.releaseSignals().orElseThrow().watchReleases(lockName, listener);
  }

  @Override
  public void unwatchReleases(String lockName) {
    delegate.releaseSignals().orElseThrow().unwatchReleases(lockName);
  }

  @Override
  public CompletableFuture<Void> abandon(String lockName, LockOwner owner) {
    return delegate.waitQueue().orElseThrow().abandon(lockName, owner);
  }

  @Override
  public void bindEvents(BackendEvents events) {
    delegate.sessionBoundHolds().ifPresent(sessions -> sessions.bindEvents(events));
  }

  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    return delegate.administration().orElseThrow().inspect(namePattern);
  }

  @Override
  public CompletableFuture<Optional<LockInfo>> forceRelease(String lockName) {
    return delegate.administration().orElseThrow().forceRelease(lockName);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
