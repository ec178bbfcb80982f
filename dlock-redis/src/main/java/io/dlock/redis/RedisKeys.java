package io.dlock.redis;

import org.jspecify.annotations.Nullable;

/**
 * The Redis keys and channel of a lock name. The name is wrapped in a hash tag so that the lock key
 * and its fencing counter always map to the same Redis Cluster slot, as the acquire script needs.
 *
 * <p>A hash tag ends at the first "}" after the first "{": a name that starts with "}" would make
 * an empty tag, and Redis then hashes each whole key, sending the lock and its counter to different
 * slots (CROSSSLOT). Such names get a marker, U+0001, in front: no lock name can contain a control
 * character, so the marked form is never another name's key, and the tag (the marker alone) is
 * never empty. Every other name keeps the plain form, which earlier versions used too.
 */
final class RedisKeys {
  private static final char MARKER = '\u0001';

  private final String prefix;

  RedisKeys(String prefix) {
    this.prefix = prefix;
  }

  private String tagged(String name) {
    return prefix + "{" + (name.startsWith("}") ? MARKER + name : name) + "}";
  }

  String lock(String name) {
    return tagged(name);
  }

  String fence(String name) {
    return tagged(name) + ":fence";
  }

  /**
   * Where a script remembers that it ran request {@code requestId} on this lock (for as long as the
   * client library could send it again), in the lock's slot.
   */
  String request(String name, String requestId) {
    return tagged(name) + ":r:" + requestId;
  }

  String releaseChannel(String name) {
    return tagged(name) + ":released";
  }

  /** The lock name of a lock key, or null if the key is not a lock key under this prefix. */
  @Nullable String nameOfLock(String key) {
    String start = prefix + "{";
    if (!key.startsWith(start) || !key.endsWith("}")) {
      return null;
    }
    String name = key.substring(start.length(), key.length() - 1);
    return name.startsWith(MARKER + "}") ? name.substring(1) : name;
  }
}
