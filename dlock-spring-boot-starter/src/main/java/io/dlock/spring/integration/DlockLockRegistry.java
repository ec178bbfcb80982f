package io.dlock.spring.integration;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import java.util.Objects;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link LockRegistry} backed by dlock, for code and components written
 * against it ({@code LockRegistryLeaderInitiator}, aggregators, {@code executeLocked}). Replaces
 * {@code RedisLockRegistry} or {@code JdbcLockRegistry} without rewriting their users, on any dlock
 * backend.
 *
 * <p>{@link #obtain(Object)} returns dlock's {@link Lock} view of the lock named {@code prefix +
 * String.valueOf(key)}: reentrant for the calling thread, {@code unlock()} by a thread that does
 * not hold it throws {@link IllegalMonitorStateException}, {@code newCondition()} is refused. Locks
 * are cheap views, so nothing is cached and there is nothing to expire.
 *
 * <p>Renewal: leases are renewed by the client while held (unless the options say a fixed lease);
 * {@link #renewLock(Object)} sets the calling thread's lease anew on the server for the options'
 * lease time ({@link Lease#extend}, owner and grant checked there), which is how a fixed lease is
 * kept longer, as {@code RedisLockRegistry} users renew theirs. With an owner id in the options it
 * only checks that the lease is held (a re-entry would be a server acquisition).
 *
 * <p>Metrics: its keys are not a bounded set, so its locks have the {@code lock} tag {@code other}
 * (see {@link io.dlock.spring.LockNamePatterns}).
 */
public final class DlockLockRegistry implements RenewableLockRegistry {
  private final LockClient client;
  private final String prefix;
  private final LockOptions options;

  /**
   * @param prefix prepended to every key, may be empty
   * @param options the lease of the registry's locks
   */
  public DlockLockRegistry(LockClient client, String prefix, LockOptions options) {
    this.client = Objects.requireNonNull(client, "client");
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.options = Objects.requireNonNull(options, "options");
  }

  @Override
  public Lock obtain(Object lockKey) {
    return client.lock(name(lockKey), options).asLock();
  }

  /**
   * Sets the calling thread's lease of the lock to the options' lease time from now, on the server.
   *
   * @throws IllegalStateException if the calling thread does not hold it, or its lease was lost
   * @throws io.dlock.BackendUnavailableException if the backend did not confirm in time
   */
  @Override
  public void renewLock(Object lockKey) {
    String name = name(lockKey);
    DistributedLock lock = client.lock(name, options);
    if (!lock.isHeldByCurrentHolder()) {
      throw new IllegalStateException(
          "cannot renew lock '" + name + "': the current thread does not hold a valid lease");
    }
    if (options.ownerId().isPresent()) {
      // With an owner id a re-entry goes to the server, and could take the lock anew if the
      // grant lapsed there: only check, and let the client's renewal keep the lease.
      return;
    }
    // A re-entry of this thread's grant (no round trip): extending it extends the grant, and
    // releasing it only takes back this extra hold.
    Lease reentry;
    try {
      reentry =
          lock.tryAcquire()
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "cannot renew lock '" + name + "': its lease was lost meanwhile"));
    } catch (LockLostException e) {
      throw new IllegalStateException("cannot renew lock '" + name + "': " + e.getMessage(), e);
    }
    try {
      reentry.extend(options.leaseTime());
    } catch (LockLostException e) {
      throw new IllegalStateException("cannot renew lock '" + name + "': " + e.getMessage(), e);
    } finally {
      reentry.release();
    }
  }

  private String name(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey");
    return prefix + lockKey;
  }
}
