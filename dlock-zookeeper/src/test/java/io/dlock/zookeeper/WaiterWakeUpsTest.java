package io.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The wake-up registrations of waiters, one per lock and acquisition (its owner instance). */
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
  void anAcquisitionOfAnOwnerIdGivingUpLeavesAnotherAcquisitionOfItRegistered() {
    LockOwner first = LockOwner.ofOwnerId("shared");
    LockOwner second = LockOwner.ofOwnerId("shared"); // equal, but another acquisition
    wakeUps.asked("lock", first);
    wakeUps.asked("lock", second);
    wakeUps.abandoned("lock", second);

    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).containsExactly("o:shared");
  }

  @Test
  void anAcquisitionOfAnOwnerIdGrantedLeavesAnotherAcquisitionOfItRegistered() {
    wakeUps.asked("lock", LockOwner.ofOwnerId("shared"));
    WaiterWakeUps.Registration other = wakeUps.asked("lock", LockOwner.ofOwnerId("shared"));
    wakeUps.granted(other);

    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).containsExactly("o:shared");
  }

  @Test
  void theAttemptsOfOneAcquisitionOnDifferentThreadsAreOneRegistration() throws Exception {
    // An asynchronous acquisition makes its attempts on whichever client thread is free.
    LockOwner owner = LockOwner.ofOwnerId("async");
    wakeUps.asked("lock", owner);
    WaiterWakeUps.Registration later = onOtherThread(() -> wakeUps.asked("lock", owner));
    wakeUps.granted(later);
    assertThat(wakeUps.size()).isZero();

    wakeUps.asked("lock", owner);
    onOtherThread(
        () -> {
          wakeUps.abandoned("lock", owner);
          return null;
        });
    assertThat(wakeUps.size()).isZero();
  }

  @Test
  void aLateGrantOfAnEarlierAttemptLeavesTheNewWaitOfTheSameAcquisitionRegistered() {
    LockOwner owner = LockOwner.ofOwnerId("shared");
    WaiterWakeUps.Registration earlier = wakeUps.asked("lock", owner);
    wakeUps.asked("lock", owner); // asked again (the earlier attempt was not answered in time)
    wakeUps.granted(earlier); // the earlier attempt's answer, late

    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).containsExactly("o:shared");
  }

  @Test
  void aGrantAndAnAbandonEachEndTheirRegistration() {
    WaiterWakeUps.Registration granted = wakeUps.asked("lock", LockOwner.ofGrant("1"));
    LockOwner abandoning = LockOwner.ofGrant("2");
    wakeUps.asked("lock", abandoning);
    wakeUps.granted(granted);
    wakeUps.abandoned("lock", abandoning);

    assertThat(wakeUps.size()).isZero();
    wakeUps.wakeAll(listeners, "test");
    assertThat(woken).isEmpty();
  }
}
