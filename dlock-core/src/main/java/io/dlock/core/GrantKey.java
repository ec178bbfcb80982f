package io.dlock.core;

import io.dlock.LockOptions;
import org.jspecify.annotations.Nullable;

/**
 * Who holds a grant in this client: the lock name and the holder, which is the acquiring thread or,
 * with an owner id, the owner id together with the options (holds with different lease settings are
 * separate grants, each renewed on its own terms). An asynchronous acquisition's key has no holder:
 * it equals only itself, so no other acquisition re-enters its grant.
 */
final class GrantKey {
  private final String lockName;
  private final @Nullable Object holder;

  private GrantKey(String lockName, @Nullable Object holder) {
    this.lockName = lockName;
    this.holder = holder;
  }

  /**
   * The key of {@code lockName}'s grant for the calling thread ({@code threadHolder}), the owner id
   * of the options if they have one, or, with a null {@code threadHolder}, a key of its own.
   */
  static GrantKey of(String lockName, LockOptions options, @Nullable Object threadHolder) {
    Object holder =
        options.ownerId().<Object>map(id -> new OwnerIdHolder(id, options)).orElse(threadHolder);
    return new GrantKey(lockName, holder);
  }

  String lockName() {
    return lockName;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    return holder != null
        && o instanceof GrantKey other
        && holder.equals(other.holder)
        && lockName.equals(other.lockName);
  }

  @Override
  public int hashCode() {
    return holder == null
        ? System.identityHashCode(this)
        : 31 * lockName.hashCode() + holder.hashCode();
  }

  @Override
  public String toString() {
    return "GrantKey[" + lockName + ", " + (holder == null ? "async" : holder) + "]";
  }

  /** The holder of grants made with an owner id. */
  record OwnerIdHolder(String ownerId, LockOptions options) {}
}
