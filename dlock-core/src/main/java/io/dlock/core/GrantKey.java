package io.dlock.core;

import io.dlock.LockOptions;

/**
 * Who holds a grant in this client: the lock name and the holder, which is the acquiring thread, a
 * unique object per asynchronous acquisition, or, with an owner id, the owner id together with the
 * options (holds with different lease settings are separate grants, each renewed on its own terms).
 */
record GrantKey(String lockName, Object holder) {

  /** The key of the calling thread's (or the owner id's) grant of {@code lockName}. */
  static GrantKey of(String lockName, LockOptions options, Object threadHolder) {
    return new GrantKey(
        lockName,
        options.ownerId().<Object>map(id -> new OwnerIdHolder(id, options)).orElse(threadHolder));
  }

  /** The holder of grants made with an owner id. */
  record OwnerIdHolder(String ownerId, LockOptions options) {}
}
