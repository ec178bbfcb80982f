package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockEventListener.AcquireFailure;
import io.dlock.LockLostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Session events ({@link SessionEvents}) against grants and against requests in flight: a backend
 * whose holds live in a session tells the core through the sink it bound, and the events a request
 * saw between its sending and its registration apply to the grant it brings back.
 */
// A wait on a fake clock that nobody moves never ends: fail fast instead of at the 10-minute limit.
@Timeout(60)
class SessionEventsTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration LOCAL_VALIDITY = LEASE.minusMillis(300 + 2);

  private final FakeClock clock = new FakeClock(1_000_000_000L);
  private final FakeBackend backend = new FakeBackend(clock).withSessions();
  private final RecordingListener events = new RecordingListener();
  private final CoreLockClient client = backend.client(events);

  @AfterEach
  void close() {
    client.close();
  }

  private Lease tryAcquire(String name) {
    return client.lock(name).tryAcquire().orElseThrow();
  }

  @Test
  void theCoreBindsItsSinkBeforeAnyAcquisition() {
    assertThat(backend.events()).isInstanceOf(SessionEvents.class);
  }

  @Test
  void aGrantWhoseRequestSawASuspensionStartsUncertain_andARestoreMakesItValid() {
    backend.onAcquire =
        call -> {
          backend.events().connectionSuspended("connection suspended in flight");
          return FakeBackend.granted(backend.nextToken());
        };
    Lease lease = tryAcquire("suspended");

    assertThat(lease.state()).isEqualTo(LeaseState.UNCERTAIN);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
    assertThatThrownBy(lease::ensureValid)
        .isInstanceOf(LockLostException.class)
        .hasMessageContaining("uncertain");
    assertThat(client.heldLeases().get(0).state()).isEqualTo(LeaseState.UNCERTAIN);
    assertThat(client.lock("suspended").isHeldByCurrentHolder()).isFalse();

    backend.events().connectionRestored();

    assertThat(lease.state()).isEqualTo(LeaseState.VALID);
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.remaining()).isEqualTo(LOCAL_VALIDITY);
  }

  @Test
  void aRequestSentWhileSuspendedStartsUncertain_evenWithNoEventInFlight() {
    backend.events().connectionSuspended("suspended before the request");
    Lease lease = tryAcquire("sent-suspended");
    assertThat(lease.state()).isEqualTo(LeaseState.UNCERTAIN);

    backend.events().connectionRestored();
    assertThat(lease.state()).isEqualTo(LeaseState.VALID);
  }

  @Test
  void aRestoreWhileTheRequestIsInFlightLetsItsGrantStartValid() {
    backend.events().connectionSuspended("suspended before the request");
    backend.onAcquire =
        call -> {
          backend.events().connectionRestored();
          return FakeBackend.granted(backend.nextToken());
        };
    Lease lease = tryAcquire("restored");
    assertThat(lease.state()).isEqualTo(LeaseState.VALID);
    assertThat(lease.isValid()).isTrue();
  }

  @Test
  void aSessionLostWhileASingleAttemptIsInFlight_releasesTheGrantAndThrows() {
    backend.onAcquire =
        call -> {
          backend.events().sessionLost("session expired in flight");
          return FakeBackend.granted(41);
        };

    assertThatThrownBy(() -> client.lock("in-flight").tryAcquire())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("session was lost while acquiring lock 'in-flight'")
        .hasMessageContaining("nothing is held");

    FakeBackend.AcquireCall call = backend.acquires.get(0);
    assertThat(backend.releases)
        .as("the grant of the lost session is released again, owner- and token-checked")
        .containsExactly(new FakeBackend.ReleaseCall("in-flight", call.owner(), 41));
    assertThat(client.heldLeases()).isEmpty();
    assertThat(client.renewedLeaseCount()).isZero();
    assertThat(client.lock("in-flight").isHeldByCurrentHolder()).isFalse();
    assertThat(events.acquired).isEmpty();
    RecordingListener.drainEventThread(client);
    assertThat(events.lost).as("a grant undone before anybody had it is no loss").isEmpty();
    assertThat(events.notAcquired)
        .extracting(RecordingListener.NotAcquired::failure)
        .containsExactly(AcquireFailure.BACKEND_UNAVAILABLE);
  }

  @Test
  void aWaitingAcquisitionWhoseSessionWasLostInFlightTriesAgainInTheNewSession() {
    backend.onAcquire =
        call -> {
          if (backend.acquires.size() == 1) {
            backend.events().sessionLost("session expired in flight");
            return FakeBackend.granted(1);
          }
          return FakeBackend.granted(2);
        };

    Lease lease = client.lock("retried").acquire(Duration.ofSeconds(5));

    assertThat(lease.fencingToken()).isEqualTo(2);
    assertThat(lease.state()).isEqualTo(LeaseState.VALID);
    assertThat(backend.acquires).hasSize(2);
    assertThat(backend.acquires.get(1).owner())
        .as("the retry's owner")
        .isEqualTo(backend.acquires.get(0).owner());
    assertThat(backend.releases)
        .containsExactly(
            new FakeBackend.ReleaseCall("retried", backend.acquires.get(0).owner(), 1));
  }

  @Test
  void eventsAfterRegistrationReachTheGrants_andOnlyTheOwnerNamedByALeaseLoss() {
    Lease a = tryAcquire("a");
    Lease b = tryAcquire("b");
    List<LeaseLostEvent> toldA = new CopyOnWriteArrayList<>();
    List<LeaseLostEvent> toldB = new CopyOnWriteArrayList<>();
    a.onLost(toldA::add);
    b.onLost(toldB::add);

    backend.events().connectionSuspended("blip");
    assertThat(a.state()).isEqualTo(LeaseState.UNCERTAIN);
    assertThat(b.state()).isEqualTo(LeaseState.UNCERTAIN);
    backend.events().connectionRestored();
    assertThat(a.state()).isEqualTo(LeaseState.VALID);

    // A loss of "a" by another owner key touches nothing; by its own owner key, only "a".
    backend.events().leaseLost("a", "t:somebody-else", "node deleted");
    assertThat(a.state()).isEqualTo(LeaseState.VALID);
    backend.events().leaseLost("a", backend.acquires.get(0).owner().key(), "node deleted");
    assertThat(a.state()).isEqualTo(LeaseState.LOST);
    assertThat(b.state()).isEqualTo(LeaseState.VALID);

    backend.events().sessionLost("session expired");
    assertThat(b.state()).isEqualTo(LeaseState.LOST);
    await().atMost(Duration.ofSeconds(10)).until(() -> toldA.size() == 1 && toldB.size() == 1);
    assertThat(toldA.get(0).reason()).isEqualTo(LeaseLostEvent.Reason.SESSION_LOST);
    assertThat(toldA.get(0).detail()).isEqualTo("node deleted");
    assertThat(toldB.get(0).detail()).isEqualTo("session expired");

    // A later request belongs to the new session: nothing it saw makes it uncertain or lost.
    assertThat(a.release()).isFalse();
    Lease again = tryAcquire("a");
    assertThat(again.state()).isEqualTo(LeaseState.VALID);
  }
}
