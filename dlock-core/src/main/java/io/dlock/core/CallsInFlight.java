package io.dlock.core;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The callers' threads inside the client's blocking acquisitions, counted so that {@code close()}
 * can wait for them, bounded, before it closes the backend: an attempt whose answer comes while the
 * client closes gives back the grant it was answered with itself, and it can only do so while the
 * backend is open. Entering and leaving cost an atomic increment each; the lock is taken only once
 * close() waits. A lock and a condition rather than {@code synchronized}: callers may be virtual
 * threads.
 */
final class CallsInFlight {
  private final AtomicInteger count = new AtomicInteger();

  /** How deep the current thread is inside (a listener of an acquisition may acquire again). */
  private final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition left = lock.newCondition();
  private volatile boolean awaited;

  /** A caller enters; it must check that the client is open only after this. */
  void enter() {
    count.incrementAndGet();
    depth.get()[0]++;
  }

  void exit() {
    depth.get()[0]--;
    count.decrementAndGet();
    if (awaited) {
      lock.lock();
      try {
        left.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * Waits until no other thread is inside, at most {@code timeoutNanos}; deaf to interrupts (the
   * flag is kept), as close() is. The calling thread itself may be inside (close() called by an
   * acquisition's listener): its own entries are not waited for.
   *
   * @return the number of other callers still inside (0 if all left in time)
   */
  int awaitOthers(long timeoutNanos) {
    int own = depth.get()[0];
    boolean interrupted = false;
    long remaining = timeoutNanos;
    awaited = true;
    lock.lock();
    try {
      while (count.get() > own && remaining > 0) {
        try {
          remaining = left.awaitNanos(remaining);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      return Math.max(0, count.get() - own);
    } finally {
      lock.unlock();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
