package io.dlock.core;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;

/**
 * A lock name with its options, bound to a client. Holds no state of its own.
 *
 * <p>A lock's grants belong to the acquiring thread, which re-enters them. A semaphore's permits
 * ({@link #unshared}) are acquired through a lock of their grant name whose every acquisition is a
 * grant of its own, whichever thread makes it: two permits taken by one thread are two permits.
 */
final class NamedLock implements DistributedLock {
  private final CoreLockClient client;
  private final String name;
  private final LockOptions options;
  private final boolean reentrant;

  NamedLock(CoreLockClient client, String name, LockOptions options) {
    this(client, name, options, true);
  }

  private NamedLock(CoreLockClient client, String name, LockOptions options, boolean reentrant) {
    this.client = client;
    this.name = name;
    this.options = options;
    this.reentrant = reentrant;
  }

  /** The lock of a permit grant name: no acquisition re-enters another's grant. */
  static NamedLock unshared(CoreLockClient client, String grantName, LockOptions options) {
    return new NamedLock(client, grantName, options, false);
  }

  /** Who an acquisition holds for: the calling thread, or (unshared) nobody else. */
  private Object holder() {
    return reentrant ? Thread.currentThread() : new Object();
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
    return Optional.ofNullable(client.acquire(name, options, 0, holder()));
  }

  @Override
  public Lease acquire(Duration wait) {
    long waitNanos = checkWait(wait);
    Lease lease = client.acquire(name, options, waitNanos, holder());
    if (lease == null) {
      throw client.timeout(name, waitNanos);
    }
    return lease;
  }

  /** Acquires with no bound on the wait; for the {@link Lock} view. */
  Lease acquireForever() {
    Lease lease = client.acquire(name, options, Deadline.MAX_NANOS, holder());
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
    if (!reentrant) {
      return false; // a permit's grant has no holder to ask about but its Permit
    }
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
