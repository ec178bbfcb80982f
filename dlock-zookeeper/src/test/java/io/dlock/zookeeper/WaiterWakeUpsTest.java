package io.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.ReleaseListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The wake-up registrations of waiters, one per lock, owner and acquiring thread. */
class WaiterWakeUpsTest {
  private final WaiterWakeUps wakeUps = new WaiterWakeUps();
  private final List<String> woken = new CopyOnWriteArrayList<>();
  private final Map<String, ReleaseListener> listeners = Map.of("lock", woken::add);

  private static <T> T onOtherThread(Supplier<T> call) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread thread = new Thread(() -> result.complete(call.get()));
    thread.start();
    return result.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aThreadOfAnOwnerIdGivingUpLeavesAnotherThreadOfItRegistered() throws Exception {
    wakeUps.asked("lock", "o:shared");
    onOtherThread(
        () -> {
          wakeUps.asked("lock", "o:shared");
          wakeUps.abandoned("lock", "o:shared");
          return null;
        });

    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).containsExactly("o:shared");
  }

  @Test
  void aThreadOfAnOwnerIdGrantedLeavesAnotherThreadOfItRegistered() throws Exception {
    wakeUps.asked("lock", "o:shared");
    WaiterWakeUps.Registration other = onOtherThread(() -> wakeUps.asked("lock", "o:shared"));
    wakeUps.granted(other);

    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).containsExactly("o:shared");
  }

  @Test
  void aLateGrantOfAnEarlierAttemptLeavesTheNewWaitOfTheSameThreadRegistered() {
    WaiterWakeUps.Registration earlier = wakeUps.asked("lock", "o:shared");
    wakeUps.abandoned("lock", "o:shared");
    wakeUps.asked("lock", "o:shared");
    wakeUps.granted(earlier); // the earlier attempt's answer, after its thread gave up

    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).containsExactly("o:shared");
  }

  @Test
  void aGrantAndAnAbandonEachEndTheirRegistration() {
    WaiterWakeUps.Registration granted = wakeUps.asked("lock", "t:1");
    wakeUps.asked("lock", "t:2");
    wakeUps.granted(granted);
    wakeUps.abandoned("lock", "t:2");

    assertThat(wakeUps.size()).isZero();
    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).isEmpty();
  }
}
