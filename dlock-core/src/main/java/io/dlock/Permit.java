package io.dlock;

/**
 * A grant of a {@link LeasedSemaphore}'s permits: a lease like a lock's (a fencing token, renewal,
 * the loss signal, release by its holder only), on {@link #count()} permits. {@link #lockName()} is
 * the semaphore's name. A permit is never shared: each acquisition is a grant of its own, whichever
 * thread makes it, and any thread may release it.
 */
public interface Permit extends Lease {

  /** How many of the semaphore's permits this grant holds. */
  int count();
}
