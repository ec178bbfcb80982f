package io.dlock.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * A lease to renew: the lock's name, its owner, the grant's fencing token and the lease time to
 * extend by.
 *
 * @param lockName the lock's name
 * @param owner the owner stored with the lock
 * @param fencingToken the fencing token of the grant to renew; a newer grant of the same owner id
 *     (another token) is not this lease and must not be renewed by it
 * @param lease the lease time to set
 */
public record HeldLease(String lockName, LockOwner owner, long fencingToken, Duration lease) {
  public HeldLease {
    Objects.requireNonNull(lockName, "lockName");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(lease, "lease");
  }
}
