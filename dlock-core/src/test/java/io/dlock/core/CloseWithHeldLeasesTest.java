package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClientOptions;
import io.dlock.spi.ReleaseResult;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 29, left open by the last notes): closing the client (a Spring context closing)
 * released the leases of work still running, asynchronous work above all, without a word to it: no
 * loss event, so an {@code INTERRUPT} publisher ran on unlocked. Its holders are now told.
 */
class CloseWithHeldLeasesTest {

  @Test
  void aLeaseStillHeldAtCloseIsReleasedAndItsHoldersAreToldItEnded() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    RecordingListener events = new RecordingListener();
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(backend, LockClientOptions.defaults().withEventListener(events));
    Lease lease = client.lock("job").tryAcquire().orElseThrow();
    List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
    lease.onLost(told::add);

    client.close();

    assertThat(backend.releases).as("released on the server").hasSize(1);
    assertThat(told)
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.CLIENT_CLOSED));
    assertThat(events.lost)
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.CLIENT_CLOSED));
    assertThat(lease.state()).isEqualTo(io.dlock.LeaseState.LOST);
    List<LeaseLostEvent> late = new CopyOnWriteArrayList<>();
    lease.onLost(late::add);
    assertThat(late).as("a listener registered after close is told at once").hasSize(1);
  }

  @Test
  void aReleaseThatFailsAtCloseSaysTheLockStaysHeldUntilItsLeaseEnds() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.onRelease = call -> CompletableFuture.failedFuture(new RuntimeException("down"));
    CoreLockClient client = backend.client();
    Lease lease = client.lock("job").tryAcquire().orElseThrow();
    List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
    lease.onLost(told::add);

    client.close();

    assertThat(told)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.CLIENT_CLOSED);
              assertThat(e.detail()).contains("until the lease ends");
            });
  }

  @Test
  void aLeaseReleasedByItsHolderBeforeCloseIsNotReportedLost() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.onRelease = call -> CompletableFuture.completedFuture(ReleaseResult.RELEASED);
    RecordingListener events = new RecordingListener();
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(backend, LockClientOptions.defaults().withEventListener(events));
    Lease lease = client.lock("job").tryAcquire().orElseThrow();
    List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
    lease.onLost(told::add);
    assertThat(lease.release()).isTrue();

    client.close();

    assertThat(told).isEmpty();
    assertThat(events.lost).isEmpty();
  }
}
