package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockEventListener.AcquireFailure;
import io.dlock.LockInterruptedException;
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
 * bound (a single attempt, also a wait of zero: the operation timeout; a wait: the wait), then is
 * the connected client's call with what is left of the bound. Holds are the connected client's, so
 * reentrancy, renewal and loss signals are exactly its. Interrupts are treated as the core treats
 * them: a single attempt and {@code Lock.lock()} wait on and keep the flag, a wait ends.
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

  /** This lock in the connected client: a permit grant name's is its unshared lock. */
  private DistributedLock lockOf(LockClient connected) {
    return PermitGrantName.isPermit(name)
        ? DeferredLockClient.host(connected).permitLock(name, options)
        : connected.lock(name, options);
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

  /**
   * The connected client's lock, waiting for the connection at most {@code boundNanos}.
   *
   * @param interruptible whether an interrupt ends the wait (a wait for the lock), or is kept for
   *     afterwards (a single attempt, {@code Lock.lock()})
   */
  private DistributedLock connectedLock(long boundNanos, boolean interruptible) {
    long start = client.options().clock().nanoTime();
    try {
      return lockOf(client.await(boundNanos, interruptible));
    } catch (BackendUnavailableException e) {
      client.reportUnavailable(name, start);
      throw e;
    } catch (LockInterruptedException e) {
      client.reportNotAcquired(name, AcquireFailure.INTERRUPTED, start);
      throw e;
    }
  }

  /**
   * The connected lock for a call that waits {@code waitNanos} for the lock: zero is one attempt,
   * which waits for the connection within the operation timeout and ignores interrupts, as the
   * core's one attempt does.
   */
  private DistributedLock connectedLockFor(long waitNanos) {
    return waitNanos == 0
        ? connectedLock(operationTimeoutNanos(), false)
        : connectedLock(waitNanos, true);
  }

  @Override
  public Optional<Lease> tryAcquire() {
    return connectedLock(operationTimeoutNanos(), false).tryAcquire();
  }

  @Override
  public Lease acquire(Duration wait) {
    long waitNanos = NamedLock.checkWait(wait);
    long start = client.options().clock().nanoTime();
    DistributedLock lock = connectedLockFor(waitNanos);
    long left = waitNanos - (client.options().clock().nanoTime() - start);
    return lock.acquire(Duration.ofNanos(Math.max(0, left)));
  }

  @Override
  public CompletableFuture<Lease> acquireAsync(Duration wait) {
    long waitNanos = NamedLock.checkWait(wait);
    LockClient connected = client.connected();
    if (connected != null) {
      return lockOf(connected).acquireAsync(wait);
    }
    long start = client.options().clock().nanoTime();
    CompletableFuture<Lease> result = new CompletableFuture<>();
    client
        .connector()
        .whenConnected(waitNanos == 0 ? operationTimeoutNanos() : waitNanos)
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
              CompletableFuture<Lease> inner;
              try {
                inner = lockOf(c).acquireAsync(Duration.ofNanos(Math.max(0, left)));
              } catch (RuntimeException e) {
                // The client closed as it connected: thrown here, nobody would see it, and the
                // caller's future would never complete.
                result.completeExceptionally(e);
                return;
              }
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
    return connected != null && lockOf(connected).isHeldByCurrentHolder();
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
      // Waits on through an interrupt, which stays set afterwards, as the core's lock() does.
      connectedLock(operationTimeoutNanos(), false).asLock().lock();
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      Lock lock;
      try {
        lock = connectedLock(operationTimeoutNanos(), true).asLock();
      } catch (LockInterruptedException e) {
        throw interruptedException(e);
      }
      lock.lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
      return connectedLock(operationTimeoutNanos(), false).asLock().tryLock();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
      long waitNanos = Math.max(0, unit.toNanos(time));
      long start = client.options().clock().nanoTime();
      Lock lock;
      try {
        lock = connectedLockFor(waitNanos).asLock();
      } catch (LockInterruptedException e) {
        throw interruptedException(e);
      }
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
      lockOf(connected).asLock().unlock();
    }

    @Override
    public Condition newCondition() {
      throw LockView.noConditions();
    }
  }

  /** As a {@link Lock} reports an interrupt: checked, with the flag cleared. */
  private static InterruptedException interruptedException(LockInterruptedException e) {
    Thread.interrupted();
    InterruptedException ie = new InterruptedException(e.getMessage());
    ie.initCause(e);
    return ie;
  }
}
