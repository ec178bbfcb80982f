package io.dlock.redis;

import io.lettuce.core.cluster.SlotHash;
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
  /** The number of Redis Cluster hash slots. */
  static final int SLOTS = SlotHash.SLOT_COUNT;

  private static final char MARKER = '\u0001';

  private final String prefix;
  private final int fencingCounters;

  /** The keys under {@code prefix} with the default number of fencing counters (one per slot). */
  RedisKeys(String prefix) {
    this(prefix, SLOTS);
  }

  /**
   * @param fencingCounters how many fencing counters the names share: a power of two, at most
   *     {@link #SLOTS}
   */
  RedisKeys(String prefix, int fencingCounters) {
    this.prefix = prefix;
    this.fencingCounters = fencingCounters;
  }

  private String tagged(String name) {
    return prefix + "{" + (name.startsWith("}") ? MARKER + name : name) + "}";
  }

  String lock(String name) {
    return tagged(name);
  }

  /**
   * The fencing counter that {@code name} draws its tokens from, one of {@code fencingCounters}:
   * counter {@code i} serves the names whose hash slot is {@code i} modulo their number, and its
   * key {@code prefix{tag}:fences} has a hash tag in slot {@code i} (see {@link SlotTags}), so that
   * with one counter per slot (always so on Redis Cluster) it is in the slot of every lock it
   * serves. ":fences" is a suffix no other key of dlock's has.
   */
  String fenceCounter(String name) {
    int counter = SlotHash.getSlot(lock(name)) & (fencingCounters - 1);
    return prefix + "{" + SlotTags.tagOf(counter) + "}:fences";
  }

  /**
   * The name's own fencing counter, as versions before shared counters kept it (one key per name,
   * never deleted). Read, and kept at the latest token, while it exists, so that a token never goes
   * backwards across an upgrade or beside a client of such a version; never created.
   */
  String legacyFence(String name) {
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
