package io.dlock.spring;

/**
 * What happens to a running {@link Locked} method when its lease is lost while it runs (a renewal
 * found the lock deleted or taken over, or no renewal got through before the lease ran out).
 */
public enum OnLeaseLost {
  /**
   * Let the method run on; a warning is logged when it returns (inside a transaction that the
   * release waits for, the transaction is rolled back instead). The default.
   */
  WARN,
  /**
   * Also interrupt the thread running the method, at once: a job that checks {@link
   * Thread#isInterrupted()} or blocks interruptibly stops instead of working on without the lock.
   * The interrupt is cleared when the method returns, so the caller's thread (a scheduler's) is not
   * left interrupted.
   */
  INTERRUPT
}
