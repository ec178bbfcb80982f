package io.dlock.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * A lease to renew: the lock's name, its owner token and the lease time to extend by.
 *
 * @param lockName the lock's name
 * @param owner the owner token stored with the lock
 * @param lease the lease time to set
 */
public record HeldLease(String lockName, String owner, Duration lease) {
  public HeldLease {
    Objects.requireNonNull(lockName, "lockName");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(lease, "lease");
  }
}
