package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A lock of a {@link DeferredLockClient}: each call first waits for the connection within its own
 * bound (a single attempt: the operation timeout; a wait: the wait), then is the connected client's
 * call with what is left of the bound. Holds are the connected client's, so reentrancy, renewal and
 * loss signals are exactly its.
 */
final class DeferredLock implements DistributedLock {
  private final DeferredLockClient client;
  private final String name;
  private final LockOptions options;

  DeferredLock(DeferredLockClient client, String name, LockOptions options) {
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

  private long operationTimeoutNanos() {
    return client.options().operationTimeout().toNanos();
  }

  /** The connected client's lock, waiting for the connection at most {@code boundNanos}. */
  private DistributedLock connectedLock(long boundNanos) {
    long start = client.options().clock().nanoTime();
    try {
      return client.await(boundNanos).lock(name, options);
    } catch (BackendUnavailableException e) {
      client.reportUnavailable(name, start);
      throw e;
    }
  }

  @Override
  public Optional<Lease> tryAcquire() {
    return connectedLock(operationTimeoutNanos()).tryAcquire();
  }

  @Override
  public Lease acquire(Duration wait) {
    long waitNanos = NamedLock.checkWait(wait);
    long start = client.options().clock().nanoTime();
    DistributedLock lock = connectedLock(waitNanos);
    long left = waitNanos - (client.options().clock().nanoTime() - start);
    return lock.acquire(Duration.ofNanos(Math.max(0, left)));
  }

  @Override
  public CompletableFuture<Lease> acquireAsync(Duration wait) {
    long waitNanos = NamedLock.checkWait(wait);
    LockClient connected = client.connected();
    if (connected != null) {
      return connected.lock(name, options).acquireAsync(wait);
    }
    long start = client.options().clock().nanoTime();
    CompletableFuture<Lease> result = new CompletableFuture<>();
    client
        .connector()
        .whenConnected(waitNanos)
        .whenComplete(
            (c, failure) -> {
              if (failure != null) {
                if (failure instanceof BackendUnavailableException) {
                  client.reportUnavailable(name, start);
                }
                result.completeExceptionally(failure);
                return;
              }
              if (result.isDone()) {
                return; // cancelled while it connected
              }
              long left = waitNanos - (client.options().clock().nanoTime() - start);
              CompletableFuture<Lease> inner =
                  c.lock(name, options).acquireAsync(Duration.ofNanos(Math.max(0, left)));
              // A cancel of the caller's future cancels the acquisition (which gives back a grant
              // it got); a grant that completes after a cancel is released here.
              result.whenComplete(
                  (lease, f) -> {
                    if (result.isCancelled()) {
                      inner.cancel(false);
                    }
                  });
              inner.whenComplete(
                  (lease, f) -> {
                    if (f != null) {
                      result.completeExceptionally(unwrap(f));
                    } else if (!result.complete(lease)) {
                      lease.release();
                    }
                  });
            });
    return result;
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }

  @Override
  public boolean isHeldByCurrentHolder() {
    LockClient connected = client.connected();
    return connected != null && connected.lock(name, options).isHeldByCurrentHolder();
  }

  @Override
  public Lock asLock() {
    return new DeferredLockView();
  }

  /**
   * The connected lock's own {@link Lock} view, reached through the connection: {@code lock()} and
   * {@code lockInterruptibly()}, which wait without bound for the lock, wait at most the operation
   * timeout for the connection.
   */
  private final class DeferredLockView implements Lock {
    @Override
    public void lock() {
      connectedLock(operationTimeoutNanos()).asLock().lock();
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      connectedLock(operationTimeoutNanos()).asLock().lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
      return connectedLock(operationTimeoutNanos()).asLock().tryLock();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
      long waitNanos = Math.max(0, unit.toNanos(time));
      long start = client.options().clock().nanoTime();
      Lock lock = connectedLock(waitNanos).asLock();
      long left = waitNanos - (client.options().clock().nanoTime() - start);
      return lock.tryLock(Math.max(0, left), TimeUnit.NANOSECONDS);
    }

    @Override
    public void unlock() {
      LockClient connected = client.connected();
      if (connected == null) {
        throw new IllegalMonitorStateException(
            "The current thread does not hold lock '" + name + "'");
      }
      connected.lock(name, options).asLock().unlock();
    }

    @Override
    public Condition newCondition() {
      throw LockView.noConditions();
    }
  }
}
