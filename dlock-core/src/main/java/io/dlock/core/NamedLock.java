package io.dlock.core;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;

/** A lock name with its options, bound to a client. Holds no state of its own. */
final class NamedLock implements DistributedLock {
  private final CoreLockClient client;
  private final String name;
  private final LockOptions options;

  NamedLock(CoreLockClient client, String name, LockOptions options) {
    this.client = client;
    this.name = name;
    this.options = options;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public LockOptions options() {
    return options;
  }

  @Override
  public Optional<Lease> tryAcquire() {
    return Optional.ofNullable(client.acquire(name, options, 0, Thread.currentThread()));
  }

  @Override
  public Lease acquire(Duration wait) {
    long waitNanos = checkWait(wait);
    Lease lease = client.acquire(name, options, waitNanos, Thread.currentThread());
    if (lease == null) {
      throw client.timeout(name, waitNanos);
    }
    return lease;
  }

  /** Acquires with no bound on the wait; for the {@link Lock} view. */
  Lease acquireForever() {
    Lease lease = client.acquire(name, options, Deadline.MAX_NANOS, Thread.currentThread());
    if (lease == null) {
      throw client.timeout(name, Deadline.MAX_NANOS);
    }
    return lease;
  }

  @Override
  public CompletableFuture<Lease> acquireAsync(Duration wait) {
    return client.acquireAsync(name, options, checkWait(wait));
  }

  @Override
  public boolean isHeldByCurrentHolder() {
    Grant grant = client.grantOf(grantKey());
    return grant != null && grant.isValid();
  }

  GrantKey grantKey() {
    return GrantKey.of(name, options, Thread.currentThread());
  }

  CoreLockClient client() {
    return client;
  }

  @Override
  public Lock asLock() {
    return new LockView(this);
  }

  static long checkWait(Duration wait) {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must be zero or positive, but was " + wait);
    }
    return Deadline.toNanosSaturated(wait);
  }

  @Override
  public String toString() {
    return "DistributedLock[" + name + ", " + options + "]";
  }
}
