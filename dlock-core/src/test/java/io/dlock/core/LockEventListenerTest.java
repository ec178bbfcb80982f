package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockEventListener.AcquireFailure;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client's {@link io.dlock.LockEventListener}: what it is told, with durations measured on the
 * client's (fake) clock. The backend moves the clock to stand for its latency.
 */
// A wait on a fake clock that nobody moves never ends: fail fast instead of at the 10-minute limit.
@Timeout(60)
class LockEventListenerTest {
  // Odd, so that the start of a wait, which the core makes odd (0 means "did not wait"), is exact.
  private final FakeClock clock = new FakeClock(1);
  private final FakeBackend backend = new FakeBackend(clock).withSessions();
  private final RecordingListener events = new RecordingListener();
  private final CoreLockClient client = backend.client(events);

  @AfterEach
  void close() {
    client.close();
  }

  /** Each attempt takes {@code latency}; the first {@code heldAnswers} find the lock held. */
  private void answer(Duration latency, int heldAnswers, Duration holderRemaining) {
    backend.onAcquire =
        call -> {
          clock.advance(latency);
          return backend.acquires.size() <= heldAnswers
              ? FakeBackend.held(holderRemaining)
              : FakeBackend.granted(backend.nextToken());
        };
  }

  @Test
  void aFirstAttemptGrantIsAcquiredWithItsLatency_andNoWait() {
    answer(Duration.ofMillis(3), 0, Duration.ZERO);
    Lease lease = client.lock("fast").tryAcquire().orElseThrow();

    assertThat(events.acquired)
        .containsExactly(
            new RecordingListener.Acquired(
                "fast", lease.fencingToken(), Duration.ofMillis(3), Duration.ZERO));
    assertThat(events.waiting).isEmpty();

    clock.advance(Duration.ofMillis(50));
    Lease reentry = client.lock("fast").tryAcquire().orElseThrow(); // no round trip
    assertThat(backend.acquires).hasSize(1);
    assertThat(events.acquired.get(1))
        .isEqualTo(
            new RecordingListener.Acquired(
                "fast", reentry.fencingToken(), Duration.ZERO, Duration.ZERO));
  }

  @Test
  void anAcquisitionThatWaitedReportsWaitingThenItsLatencyAndTheTimeItWaited() {
    answer(Duration.ofMillis(7), 2, Duration.ZERO); // held, held, granted: 7 ms each

    Lease lease = client.lock("slow").acquire(Duration.ofSeconds(10));

    assertThat(events.waiting).containsExactly("slow");
    // The wait starts after the first attempt's 7 ms, and two more attempts follow it.
    assertThat(events.acquired)
        .containsExactly(
            new RecordingListener.Acquired(
                "slow", lease.fencingToken(), Duration.ofMillis(21), Duration.ofMillis(14)));
    assertThat(events.notAcquired).isEmpty();
    assertThat(events.waitEnded)
        .containsExactly(new RecordingListener.WaitEnded("slow", Duration.ofMillis(14)));
    assertThat(events.acquisitionEvents).containsExactly("waiting", "waitEnded", "acquired");
  }

  @Test
  void anAsynchronousAcquisitionThatWaitedReportsTheSameEventsInTheSameOrder() throws Exception {
    answer(Duration.ofMillis(5), 1, Duration.ZERO); // held, then granted

    Lease lease = client.lock("later").acquireAsync(Duration.ofSeconds(10)).get();

    assertThat(events.acquisitionEvents).containsExactly("waiting", "waitEnded", "acquired");
    assertThat(events.waitEnded)
        .containsExactly(new RecordingListener.WaitEnded("later", Duration.ofMillis(5)));
    lease.release();
  }

  @Test
  void aSingleAttemptOnAHeldLockIsNotAcquiredWithTimeout() {
    answer(Duration.ofMillis(4), Integer.MAX_VALUE, Duration.ofSeconds(1));

    assertThat(client.lock("busy").tryAcquire()).isEmpty();

    assertThat(events.notAcquired)
        .containsExactly(
            new RecordingListener.NotAcquired(
                "busy", AcquireFailure.TIMEOUT, Duration.ofMillis(4)));
    assertThat(events.waiting).as("a single attempt never waits").isEmpty();
    assertThat(events.waitEnded).isEmpty();
    assertThat(events.acquired).isEmpty();
  }

  @Test
  void aWaitThatRunsOutOnTheFakeClockIsNotAcquiredWithTimeout() {
    answer(Duration.ofSeconds(1), Integer.MAX_VALUE, null);

    assertThatThrownBy(() -> client.lock("busy").acquire(Duration.ofSeconds(3)))
        .isInstanceOf(LockTimeoutException.class);

    assertThat(backend.acquires).as("attempts at 0, 1 and 2 s").hasSize(3);
    assertThat(events.waiting).containsExactly("busy");
    assertThat(events.notAcquired)
        .containsExactly(
            new RecordingListener.NotAcquired(
                "busy", AcquireFailure.TIMEOUT, Duration.ofSeconds(3)));
    // The wait began after the first attempt's second and ran to the deadline.
    assertThat(events.waitEnded)
        .containsExactly(new RecordingListener.WaitEnded("busy", Duration.ofSeconds(2)));
    assertThat(events.acquisitionEvents).containsExactly("waiting", "waitEnded", "notAcquired");
  }

  @Test
  void eachConfirmedReleaseReportsHowLongItsHoldWasHeld() {
    Lease outer = client.lock("held").tryAcquire().orElseThrow();
    clock.advance(Duration.ofSeconds(1));
    Lease inner = client.lock("held").tryAcquire().orElseThrow();
    clock.advance(Duration.ofSeconds(2));

    assertThat(inner.release()).isTrue();
    clock.advance(Duration.ofSeconds(4));
    assertThat(outer.release()).isTrue();

    long token = outer.fencingToken();
    assertThat(events.released)
        .containsExactly(
            new RecordingListener.Released("held", token, Duration.ofSeconds(2)),
            new RecordingListener.Released("held", token, Duration.ofSeconds(7)));
    assertThat(backend.releases).hasSize(1);
  }

  @Test
  void aLostGrantIsReportedOnce_whateverElseHappensToItsHolds() {
    Lease outer = client.lock("lost").tryAcquire().orElseThrow();
    Lease inner = client.lock("lost").tryAcquire().orElseThrow();
    String ownerKey = backend.acquires.get(0).owner().key();

    backend.events().leaseLost("lost", ownerKey, "node deleted");
    backend.events().sessionLost("session expired");
    backend.events().leaseLost("lost", ownerKey, "node deleted again");
    assertThat(inner.release()).isFalse();
    assertThat(outer.release()).isFalse();

    RecordingListener.drainEventThread(client);
    assertThat(events.lost)
        .containsExactly(
            new LeaseLostEvent(
                "lost", outer.fencingToken(), LeaseLostEvent.Reason.SESSION_LOST, "node deleted"));
    assertThat(events.released).as("a lost lease is never reported released").isEmpty();
  }

  @Test
  void aReleaseThatFindsTheGrantGoneOnTheServerIsReportedAsLost_withAnOnLostListener() {
    backend.releaseAnswer = ReleaseResult.NOT_HELD;
    Lease lease = client.lock("gone").tryAcquire().orElseThrow();
    lease.onLost(event -> {});

    assertThat(lease.release()).isFalse();

    RecordingListener.drainEventThread(client);
    assertThat(events.released).isEmpty();
    assertThat(events.lost)
        .extracting(LeaseLostEvent::lockName, LeaseLostEvent::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("gone", LeaseLostEvent.Reason.TAKEN_OVER));
  }

  /**
   * The same release without an {@code onLost} listener on the lease: the client's listener must be
   * told just the same ("a release that found the lease lost is reported by lost").
   */
  @Test
  void aReleaseThatFindsTheGrantGoneOnTheServerIsReportedAsLost_withoutAnOnLostListener() {
    backend.releaseAnswer = ReleaseResult.NOT_HELD;
    Lease lease = client.lock("gone").tryAcquire().orElseThrow();

    assertThat(lease.release()).isFalse();

    RecordingListener.drainEventThread(client);
    assertThat(events.released).isEmpty();
    assertThat(events.lost)
        .as("lost events told to the client's listener")
        .extracting(LeaseLostEvent::lockName, LeaseLostEvent::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("gone", LeaseLostEvent.Reason.TAKEN_OVER));
  }

  @Test
  void aFailedRenewalCallIsReportedWithTheNumberOfLeasesItWasToRenew() {
    BackendUnavailableException down = new BackendUnavailableException("down");
    backend.onRenew = leases -> CompletableFuture.failedFuture(down);
    LockOptions shortLease = LockOptions.defaults().withRenewedLease(Duration.ofMillis(300));
    Lease a = client.lock("a", shortLease).tryAcquire().orElseThrow();
    Lease b = client.lock("b", shortLease).tryAcquire().orElseThrow();

    clock.advance(Duration.ofMillis(100));
    await().atMost(Duration.ofSeconds(10)).until(() -> !events.renewalFailed.isEmpty());

    assertThat(events.renewalFailed.get(0).leases()).isEqualTo(2);
    assertThat(events.renewalFailed.get(0).failure()).isSameAs(down);
    assertThat(List.of(a.isValid(), b.isValid())).containsOnly(true);
    assertThat(events.lost).isEmpty();
  }
}
