package io.dlock.spi;

import org.jspecify.annotations.Nullable;

/** Receives a backend's release signals for one lock name. Must return quickly. */
@FunctionalInterface
public interface ReleaseListener {

  /**
   * The lock may be free now.
   *
   * @param waiterOwnerKey the {@link LockOwner#key()} of the one waiter whose turn it is (a backend
   *     that queues waiters, such as ZooKeeper, knows it), or null when any waiter may try: the
   *     core then wakes its oldest waiter for the name
   */
  void released(@Nullable String waiterOwnerKey);
}
