package io.dlock.core;

import io.dlock.Lease;
import io.dlock.LockInterruptedException;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * {@link Lock} over a distributed lock. Each {@code lock} opens a hold of the caller's grant and
 * {@code unlock} releases the most recent one, so nested lock/unlock pairs balance as with {@link
 * java.util.concurrent.locks.ReentrantLock}.
 */
final class LockView implements Lock {
  private final NamedLock lock;

  LockView(NamedLock lock) {
    this.lock = lock;
  }

  /** Waits without bound; an interrupt does not stop the wait, but stays set afterwards. */
  @Override
  public void lock() {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          lock.acquireForever();
          return;
        } catch (LockInterruptedException e) {
          Thread.interrupted();
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void lockInterruptibly() throws InterruptedException {
    try {
      lock.acquireForever();
    } catch (LockInterruptedException e) {
      Thread.interrupted();
      throw interruptedException(e);
    }
  }

  @Override
  public boolean tryLock() {
    return lock.tryAcquire().isPresent();
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    try {
      lock.acquire(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
      return true;
    } catch (LockTimeoutException e) {
      return false;
    } catch (LockInterruptedException e) {
      Thread.interrupted();
      throw interruptedException(e);
    }
  }

  @Override
  public void unlock() {
    Grant grant = lock.client().grantOf(lock.grantKey());
    Lease hold = grant == null ? null : grant.lastOpenHandle();
    if (hold == null) {
      throw new IllegalMonitorStateException(
          "The current thread does not hold lock '" + lock.name() + "'");
    }
    hold.release();
  }

  @Override
  public Condition newCondition() {
    throw noConditions();
  }

  static UnsupportedOperationException noConditions() {
    return new UnsupportedOperationException(
        "newCondition() is not supported: a Condition cannot be shared across processes through a"
            + " distributed lock; use a queue or a pub/sub channel of the backend instead");
  }

  private static InterruptedException interruptedException(LockInterruptedException e) {
    InterruptedException ie = new InterruptedException(e.getMessage());
    ie.initCause(e);
    return ie;
  }
}
