package io.dlock.redis;

import io.lettuce.core.cluster.SlotHash;

/**
 * For each Redis Cluster hash slot, a short hash tag that Redis puts in that slot: the first number
 * (0, 1, 2, ... written in base 36) whose CRC16 falls in the slot. Every client computes the same
 * table, so that all of them agree on the key of each fencing counter ({@link
 * RedisKeys#fenceCounter}): two clients with different rules would count one name's tokens on
 * different keys.
 */
final class SlotTags {
  private static final String[] TAGS = compute();

  private SlotTags() {}

  /** The hash tag of {@code slot}: a key {@code ...{tag}...} is in that slot. */
  static String tagOf(int slot) {
    return TAGS[slot];
  }

  private static String[] compute() {
    String[] tags = new String[RedisKeys.SLOTS];
    int missing = tags.length;
    for (long n = 0; missing > 0; n++) {
      String candidate = Long.toString(n, 36);
      int slot = SlotHash.getSlot(candidate);
      if (tags[slot] == null) {
        tags[slot] = candidate;
        missing--;
      }
    }
    return tags;
  }
}
