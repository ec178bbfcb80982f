package io.dlock.testkit;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** A backend that forwards every call to another; subclasses override what they change. */
public abstract class ForwardingLockBackend implements LockBackend {
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
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, String owner, Duration lease) {
    return delegate.tryAcquire(lockName, owner, lease);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, String owner, long fencingToken) {
    return delegate.release(lockName, owner, fencingToken);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return delegate.renew(leases);
  }

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
    return delegate.watchReleases(lockName, listener);
  }

  @Override
  public void unwatchReleases(String lockName) {
    delegate.unwatchReleases(lockName);
  }

  @Override
  public boolean signalsReleases() {
    return delegate.signalsReleases();
  }

  @Override
  public boolean sharesOwnerAcrossClients() {
    return delegate.sharesOwnerAcrossClients();
  }

  @Override
  public CompletableFuture<Void> abandon(String lockName, String owner) {
    return delegate.abandon(lockName, owner);
  }

  @Override
  public void bindEvents(BackendEvents events) {
    delegate.bindEvents(events);
  }

  @Override
  public CompletableFuture<java.util.List<io.dlock.LockInfo>> inspect(String namePattern) {
    return delegate.inspect(namePattern);
  }

  @Override
  public CompletableFuture<java.util.Optional<io.dlock.LockInfo>> forceRelease(String lockName) {
    return delegate.forceRelease(lockName);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
