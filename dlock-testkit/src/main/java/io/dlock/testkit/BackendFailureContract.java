package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A backend that fails: an unreachable or stopped server gives {@link BackendUnavailableException}
 * within the bound, and a session lost while a grant is in flight leaves nothing held.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface BackendFailureContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void unreachableServerGivesBackendUnavailableWithinTheBound() {
    long start = System.nanoTime();
    try {
      LockBackend backend = fixture().newBackendForUnreachableServer();
      LockClient client =
          LockClients.create(
              backend, LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)));
      fixture().closeAfterTest(client);
      assertThatThrownBy(
              () -> client.lock(fixture().name("nowhere")).acquire(Duration.ofSeconds(3)))
          .isInstanceOf(BackendUnavailableException.class);
    } catch (BackendUnavailableException expected) {
      // Failing at connect time is as good as failing at the first call.
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(millis(3000 + 1000));
  }

  @Test
  default void stoppedServerGivesBackendUnavailableWithinTheWait() {
    ServerControl control = fixture().serverControl().orElse(null);
    assumeTrue(control != null, "the server under test is external and cannot be stopped");
    LockClient client = fixture().newClient();
    String lockName = fixture().name("stopped");
    client.lock(lockName).tryAcquire().orElseThrow().release();
    control.stop();
    try {
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock(lockName).acquire(Duration.ofSeconds(3)))
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(millis(3000 + 1000));
    } finally {
      control.start();
    }
  }

  /**
   * The session ends after the server granted but before the core registered the grant (the
   * backend's session event and its answer race). The core must apply the event to the grant in
   * flight: nothing is handed out, the grant is released on the server, a waiting acquisition tries
   * again, and no lost grant stays in the renewer.
   */
  @Test
  default void aSessionLossWhileAGrantIsInFlightLeavesNothingHeld() {
    LockClient client = fixture().newClient();
    FaultyBackend backend = fixture().lastBackend();
    LockClient other = fixture().newClient();
    String lockName = fixture().name("in-flight");

    backend.onNextGrant(events -> events.sessionLost("test: session lost in flight"));
    assertThatThrownBy(() -> client.lock(lockName).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    assertThat(client.heldLeases()).isEmpty();
    await()
        .atMost(millis(3000))
        .untilAsserted(
            () -> {
              Optional<Lease> free = other.lock(lockName).tryAcquire();
              assertThat(free).as("the grant made in flight was released").isPresent();
              free.get().release();
            });

    backend.onNextGrant(events -> events.sessionLost("test: session lost in flight"));
    Lease lease = client.lock(lockName).acquire(millis(5000));
    assertThat(lease.isValid()).isTrue();
    assertThat(other.lock(lockName).tryAcquire()).isEmpty();
    assertThat(lease.release()).isTrue();
  }
}
