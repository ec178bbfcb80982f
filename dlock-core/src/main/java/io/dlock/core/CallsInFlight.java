package io.dlock.core;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The callers' threads inside the client's blocking acquisitions, counted so that {@code close()}
 * can wait for them, bounded, before it closes the backend: an attempt whose answer comes while the
 * client closes gives back the grant it was answered with itself, and it can only do so while the
 * backend is open. A lock and a condition rather than {@code synchronized}: callers may be virtual
 * threads.
 */
final class CallsInFlight {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition none = lock.newCondition();
  private int count;

  /** A caller enters; it must check that the client is open only after this. */
  void enter() {
    lock.lock();
    try {
      count++;
    } finally {
      lock.unlock();
    }
  }

  void exit() {
    lock.lock();
    try {
      if (--count == 0) {
        none.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until no caller is inside, at most {@code timeoutNanos}; deaf to interrupts (the flag is
   * kept), as close() is.
   *
   * @return the number of callers still inside (0 if all left in time)
   */
  int awaitNone(long timeoutNanos) {
    boolean interrupted = false;
    long left = timeoutNanos;
    lock.lock();
    try {
      while (count > 0 && left > 0) {
        try {
          left = none.awaitNanos(left);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      return count;
    } finally {
      lock.unlock();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** For tests: how many callers are inside. */
  int count() {
    lock.lock();
    try {
      return count;
    } finally {
      lock.unlock();
    }
  }
}
