package io.dlock.spring;

import io.dlock.Lease;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link OnLeaseLost#INTERRUPT}: interrupts the thread running a {@link Locked} method when its
 * lease is lost, and never after the method returned. The lost-lease listener runs on the client's
 * event thread, so without a lock it could interrupt the thread just after the method returned,
 * leaving a scheduler's thread interrupted for its next task; under the lock, either the interrupt
 * lands while the method runs (and is cleared when it returns), or the method has returned and
 * nothing is interrupted.
 */
final class LostLeaseInterrupt {
  private final Thread runner = Thread.currentThread();
  private final ReentrantLock lock = new ReentrantLock();
  private boolean running = true; // guarded by lock
  private boolean interrupted; // guarded by lock

  private LostLeaseInterrupt() {}

  /** Interrupts the calling thread if {@code lease} is lost before {@link #methodReturned}. */
  static LostLeaseInterrupt watch(Lease lease) {
    LostLeaseInterrupt interrupt = new LostLeaseInterrupt();
    lease.onLost(event -> interrupt.leaseLost());
    return interrupt;
  }

  private void leaseLost() {
    lock.lock();
    try {
      if (running) {
        interrupted = true;
        runner.interrupt();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Called on the method's thread when it returned or threw: no interrupt from now on. */
  void methodReturned() {
    boolean clear;
    lock.lock();
    try {
      running = false;
      clear = interrupted;
    } finally {
      lock.unlock();
    }
    if (clear) {
      Thread.interrupted(); // the interrupt was for the method, not for whoever called it
    }
  }
}
