package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.core.CoreLockClient;
import io.dlock.spi.BackendEvents;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Session events from a backend turn leases uncertain, valid again, or lost (exactly once). */
class SessionEventsTest {

  private final AtomicReference<BackendEvents> events = new AtomicReference<>();

  private LockClient client() {
    InMemoryLockBackend memory = new InMemoryLockBackend();
    FaultyBackend backend =
        new FaultyBackend(memory) {
          @Override
          public void bindEvents(BackendEvents sink) {
            events.set(sink);
          }
        };
    return CoreLockClient.create(backend, LockClientOptions.defaults());
  }

  @Test
  void suspensionMakesLeasesUncertainAndRestorationValidAgain() {
    try (LockClient client = client()) {
      Lease lease = client.lock("session").tryAcquire().orElseThrow();
      events.get().connectionSuspended("test");
      assertThat(lease.state()).isEqualTo(LeaseState.UNCERTAIN);
      assertThat(lease.isValid()).isFalse();
      events.get().connectionRestored();
      assertThat(lease.state()).isEqualTo(LeaseState.VALID);
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void sessionLossTellsEveryHolderOnce() {
    try (LockClient client = client()) {
      Lease a = client.lock("a").tryAcquire().orElseThrow();
      Lease b = client.lock("b").tryAcquire().orElseThrow();
      List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
      a.onLost(lost::add);
      b.onLost(lost::add);
      events.get().connectionSuspended("test");
      events.get().sessionLost("session expired");
      events.get().sessionLost("again");
      await().until(() -> lost.size() == 2);
      assertThat(lost).allMatch(e -> e.reason() == LeaseLostEvent.Reason.SESSION_LOST);
      assertThat(a.state()).isEqualTo(LeaseState.LOST);
      assertThat(a.release()).isFalse();
      assertThat(lost).hasSize(2);
    }
  }
}
