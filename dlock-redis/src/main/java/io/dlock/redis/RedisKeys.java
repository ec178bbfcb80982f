package io.dlock.redis;

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
}
