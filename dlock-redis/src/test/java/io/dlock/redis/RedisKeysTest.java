package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How lock names map to Redis keys, as docs/redis.md ("Keys of a name") states it; issue 29,
 * finding 2: a name starting with "}" mapped to two keys across two versions, of which only one was
 * ever released, so that there is now one mapping, documented and pinned here.
 */
class RedisKeysTest {
  private final RedisKeys keys = new RedisKeys("dlock:");

  @Test
  void aNameIsItsKeyInsideAHashTag() {
    assertThat(keys.lock("orders:42")).isEqualTo("dlock:{orders:42}");
    assertThat(keys.lock("a{b}c")).isEqualTo("dlock:{a{b}c}");
    assertThat(keys.request("orders:42", "r1")).isEqualTo("dlock:{orders:42}:r:r1");
    assertThat(keys.releaseChannel("orders:42")).isEqualTo("dlock:{orders:42}:released");
  }

  @Test
  void aNameStartingWithAClosingBraceGetsTheMarkerAndStaysInOneSlot() {
    String name = "}x";
    assertThat(keys.lock(name)).isEqualTo("dlock:{\u0001}x}");
    int slot = SlotHash.getSlot(keys.lock(name));
    assertThat(SlotHash.getSlot(keys.request(name, "r1"))).isEqualTo(slot);
    assertThat(SlotHash.getSlot(keys.releaseChannel(name))).isEqualTo(slot);
    assertThat(SlotHash.getSlot(keys.fenceCounter(name))).isEqualTo(slot);
    // The unmarked form is not this name's key, nor any name's: inspection does not list it.
    assertThat(keys.nameOfLock("dlock:{}x}")).isNull();
  }

  @Test
  void lockKeysMapBackToTheirNamesAndNoOtherKeyDoes() {
    for (String name : List.of("plain", "}brace", "a}b", "{x}", "ü-ñ")) {
      assertThat(keys.nameOfLock(keys.lock(name))).as(name).isEqualTo(name);
    }
    assertThat(keys.nameOfLock(keys.fenceCounter("plain"))).isNull();
    assertThat(keys.nameOfLock(keys.request("plain", "r1"))).isNull();
    assertThat(keys.nameOfLock(keys.releaseChannel("plain"))).isNull();
    assertThat(keys.nameOfLock("other:{plain}")).isNull();
    assertThat(keys.nameOfLock("dlock:{}")).as("no name is empty").isNull();
    assertThat(keys.nameOfLock("dlock:{\u0001x}")).as("the marker only before '}'").isNull();
  }
}
