package io.dlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The semaphore run's fence: admits only listed tokens, and tells each delisting once. */
class PermitFenceTest {
  private final Set<Long> live = new HashSet<>();
  private final List<String> delisted = new ArrayList<>();
  private final PermitFence fence =
      new PermitFence(semaphore -> Set.copyOf(live), (s, t) -> delisted.add(s + " " + t));

  @Test
  void aTokenSeenListedAndThenNot_isRevokedForGoodAndItsDelistingToldOnce() {
    live.addAll(Set.of(1L, 2L));
    assertThat(fence.check("w1", "s", 1)).isEqualTo(PermitFence.OK);
    assertThat(fence.check("w2", "s", 2)).isEqualTo(PermitFence.OK);
    live.remove(1L);
    assertThat(fence.check("w2", "s", 2)).isEqualTo(PermitFence.OK);
    assertThat(delisted).containsExactly("s 1");
    live.add(1L); // a backend that lists it again does not revive it
    assertThat(fence.check("w1", "s", 1)).isEqualTo("revoked");
    live.remove(1L);
    assertThat(fence.check("w2", "s", 2)).isEqualTo(PermitFence.OK);
    assertThat(delisted).containsExactly("s 1");
  }

  @Test
  void aTokenNeverSeenListed_isRefusedWithoutADelisting() {
    assertThat(fence.check("w1", "s", 7)).isEqualTo("unlisted");
    live.add(7L);
    assertThat(fence.check("w1", "s", 7)).isEqualTo(PermitFence.OK);
    assertThat(delisted).isEmpty();
  }
}
