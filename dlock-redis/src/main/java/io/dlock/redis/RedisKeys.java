package io.dlock.redis;

import io.lettuce.core.cluster.SlotHash;
import org.jspecify.annotations.Nullable;

/**
 * The Redis keys and channel of a lock name (docs/redis.md, "Keys"). The name is wrapped in a hash
 * tag, {@code prefix{name}}, so that the lock key, its request memory keys and its release channel
 * are in the lock's Redis Cluster slot, as the scripts need.
 *
 * <p>A hash tag ends at the first "}" after the first "{": a name that starts with "}" would make
 * an empty tag, and Redis then hashes each whole key, sending a lock and its other keys to
 * different slots (CROSSSLOT). Such names get a marker, U+0001, in front: no lock name can contain
 * a control character, so the marked form is never another name's key, and the tag (the marker
 * alone) is never empty.
 */
final class RedisKeys {
  /** The number of Redis Cluster hash slots, and of fencing counters. */
  static final int SLOTS = SlotHash.SLOT_COUNT;

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

  /**
   * The fencing counter that {@code name} draws its tokens from: one per hash slot, shared by the
   * names of that slot, with the key {@code prefix{tag}:fences} whose hash tag is in the same slot
   * (see {@link SlotTags}), so that on Redis Cluster it is on the node of every lock it serves. The
   * mapping is fixed, not a setting: two clients that mapped a name to different counters would
   * hand out tokens from both, and a token could go backwards. ":fences" is a suffix no other key
   * of dlock's has.
   */
  String fenceCounter(String name) {
    return prefix + "{" + SlotTags.tagOf(SlotHash.getSlot(lock(name))) + "}:fences";
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
    if (name.startsWith("}")) {
      return null; // no name's key: a name starting with "}" has the marker in front
    }
    if (name.startsWith(MARKER + "}")) {
      name = name.substring(1);
    }
    try {
      return io.dlock.LockNames.requireValid(name);
    } catch (IllegalArgumentException e) {
      return null; // a key under the prefix that no lock name maps to
    }
  }
}
