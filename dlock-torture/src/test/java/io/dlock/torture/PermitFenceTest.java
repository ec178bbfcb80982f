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

  /** A poll sees grants end while no worker enters the register. */
  @Test
  void aPollNotesATokenListedThenNot_andRevokesIt() {
    live.add(3L);
    fence.poll("s");
    assertThat(delisted).isEmpty();
    live.remove(3L);
    fence.poll("s");
    assertThat(delisted).containsExactly("s 3");
    live.add(3L);
    assertThat(fence.check("w1", "s", 3)).isEqualTo("revoked");
  }

  @Test
  void aPollOfABackendThatCannotBeAsked_changesNothing() {
    PermitFence failing =
        new PermitFence(
            semaphore -> {
              throw new IllegalStateException("down");
            },
            (s, t) -> delisted.add(s + " " + t));
    failing.poll("s");
    assertThat(delisted).isEmpty();
    assertThat(failing.check("w1", "s", 1)).isEqualTo("unavailable");
  }

  @Test
  void aTokenNeverSeenListed_isRefusedWithoutADelisting() {
    assertThat(fence.check("w1", "s", 7)).isEqualTo("unlisted");
    live.add(7L);
    assertThat(fence.check("w1", "s", 7)).isEqualTo(PermitFence.OK);
    assertThat(delisted).isEmpty();
  }
}
