package io.dlock.spi;

import java.util.concurrent.CompletableFuture;

/**
 * An optional ability: the backend keeps state for each waiter (a ZooKeeper queue node), which the
 * core removes when a wait ends without a grant.
 */
public interface WaitQueue {

  /**
   * The owner's wait for {@code lockName} ended without a grant (given up, timed out, interrupted,
   * or a single attempt that found the lock held): remove its waiter state. Must not block.
   */
  CompletableFuture<Void> abandon(String lockName, LockOwner owner);
}
