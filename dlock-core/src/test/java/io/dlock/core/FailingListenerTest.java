package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A {@link io.dlock.LockEventListener} that throws never breaks a lock. */
// A wait on a fake clock that nobody moves never ends: fail fast instead of at the 10-minute limit.
@Timeout(60)
class FailingListenerTest {
  private static final long MS = 1_000_000L;

  /** Writes every event down (so a test can tell it was called), then throws. */
  private static final class ThrowingListener extends RecordingListener {
    private static IllegalStateException boom() {
      return new IllegalStateException("listener failure (expected by the test)");
    }

    @Override
    public void waiting(String lockName) {
      super.waiting(lockName);
      throw boom();
    }

    @Override
    public void acquired(String lockName, long fencingToken, Duration latency, Duration waited) {
      super.acquired(lockName, fencingToken, latency, waited);
      throw boom();
    }

    @Override
    public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
      super.notAcquired(lockName, failure, latency);
      throw boom();
    }

    @Override
    public void released(String lockName, long fencingToken, Duration held) {
      super.released(lockName, fencingToken, held);
      throw boom();
    }

    @Override
    public void lost(LeaseLostEvent event) {
      super.lost(event);
      throw boom();
    }

    @Override
    public void renewalFailed(int leases, RuntimeException failure) {
      super.renewalFailed(leases, failure);
      throw boom();
    }
  }

  private final FakeClock clock = new FakeClock();
  private final FakeBackend backend = new FakeBackend(clock).withSessions();
  private final ThrowingListener listener = new ThrowingListener();
  private final CoreLockClient client = backend.client(listener);

  @AfterEach
  void close() {
    client.close();
  }

  @Test
  void acquisitionsAndReleasesWorkWhenEveryListenerCallThrows() {
    // "contended" is held for the first attempt, then granted; "busy" is always held, and each
    // of its attempts takes 2 ms, so that a wait for it runs out on the fake clock.
    backend.onAcquire =
        call -> {
          if (call.lockName().equals("busy")) {
            clock.advance(Duration.ofMillis(2));
            return FakeBackend.held(Duration.ZERO);
          }
          return backend.acquires.size() == 1
              ? FakeBackend.held(Duration.ZERO)
              : FakeBackend.granted(backend.nextToken());
        };

    Lease lease = client.lock("contended").acquire(Duration.ofSeconds(10));
    assertThat(lease.state()).isEqualTo(LeaseState.VALID);
    assertThat(listener.waiting).containsExactly("contended");
    assertThat(listener.acquired).hasSize(1);

    assertThat(client.lock("busy").tryAcquire()).isEmpty();
    assertThatThrownBy(() -> client.lock("busy").acquire(Duration.ofMillis(5)))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(listener.notAcquired).hasSize(2);

    assertThat(lease.release()).isTrue();
    assertThat(listener.released).hasSize(1);
    assertThat(backend.releases)
        .extracting(FakeBackend.ReleaseCall::lockName)
        .containsExactly("contended");
    assertThat(client.heldLeases()).isEmpty();
  }

  @Test
  void renewalAndLossNoticesGoOnWhenTheListenerThrows() {
    backend.onRenew =
        leases -> CompletableFuture.failedFuture(new BackendUnavailableException("down"));
    Lease renewed =
        client
            .lock("renewed", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();

    clock.set(100 * MS);
    await().atMost(Duration.ofSeconds(10)).until(() -> !listener.renewalFailed.isEmpty());

    // The renewer survived the listener's exception: its retry gets through once the backend does.
    backend.onRenew = leases -> CompletableFuture.completedFuture(java.util.Set.of());
    Grant grant = ((LeaseHandle) renewed).grant();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> grant.validUntilNanos() == 100 * MS + 295 * MS);
    assertThat(renewed.isValid()).isTrue();

    // The event thread survives the listener's exception: every later notice is still delivered.
    List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
    renewed.onLost(told::add);
    Lease other = client.lock("other").tryAcquire().orElseThrow();
    other.onLost(told::add);
    backend.events().sessionLost("session expired");

    await().atMost(Duration.ofSeconds(10)).until(() -> told.size() == 2);
    RecordingListener.drainEventThread(client);
    assertThat(listener.lost)
        .extracting(LeaseLostEvent::lockName)
        .containsExactlyInAnyOrder("renewed", "other");
  }
}
