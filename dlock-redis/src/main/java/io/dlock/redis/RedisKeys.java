package io.dlock.redis;

import org.jspecify.annotations.Nullable;

/**
 * The Redis keys and channel of a lock name. The name is wrapped in a hash tag so that the lock key
 * and its fencing counter always map to the same Redis Cluster slot, as the acquire script needs.
 */
final class RedisKeys {
  private final String prefix;

  RedisKeys(String prefix) {
    this.prefix = prefix;
  }

  String lock(String name) {
    return prefix + "{" + name + "}";
  }

  String fence(String name) {
    return prefix + "{" + name + "}:fence";
  }

  String releaseChannel(String name) {
    return prefix + "{" + name + "}:released";
  }

  /** The lock name of a lock key, or null if the key is not a lock key under this prefix. */
  @Nullable String nameOfLock(String key) {
    String start = prefix + "{";
    if (!key.startsWith(start) || !key.endsWith("}")) {
      return null;
    }
    return key.substring(start.length(), key.length() - 1);
  }
}
