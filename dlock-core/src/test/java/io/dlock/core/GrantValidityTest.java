package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A grant's local validity, on a fake clock: it runs from the send time of the request that got (or
 * renewed) it, minus a margin of 1% of the lease plus 2 ms, whatever the answer's latency.
 */
// A wait on a fake clock that nobody moves never ends: fail fast instead of at the 10-minute limit.
@Timeout(60)
class GrantValidityTest {
  private static final long MS = 1_000_000L;

  private final FakeClock clock = new FakeClock(5_000 * MS);
  private final FakeBackend backend = new FakeBackend(clock);
  private final CoreLockClient client = backend.client();

  @AfterEach
  void close() {
    client.close();
  }

  private static Grant grant(Lease lease) {
    return ((LeaseHandle) lease).grant();
  }

  /** The backend answers after {@code latency} on the fake clock. */
  private void answerAfter(Duration latency) {
    backend.onAcquire =
        call -> {
          clock.advance(latency);
          return FakeBackend.granted(backend.nextToken());
        };
  }

  @Test
  void theMarginIsOnePercentOfTheLeasePlusTwoMilliseconds() {
    assertThat(Grant.safetyMarginNanos(100 * MS)).isEqualTo(3 * MS);
    assertThat(Grant.safetyMarginNanos(300 * MS)).isEqualTo(5 * MS);
    assertThat(Grant.safetyMarginNanos(10_000 * MS)).isEqualTo(102 * MS);
    assertThat(Grant.safetyMarginNanos(Duration.ofDays(7).toNanos()))
        .isEqualTo(Duration.ofSeconds(6048).toNanos() + 2 * MS);
  }

  /**
   * A backend whose lease began with a later request of its call (a JDBC permit transaction: the
   * insert, after locking and counting) says how much later: validity runs from then. Regression of
   * the JDBC semaphore soaks under {@code delay}: counted from the call, six round trips of 400 ms
   * spent a 2 s lease, and every grant arrived over ("arrived after its lease ... had run out").
   */
  @Test
  void validityRunsFromTheRequestThatStartedTheLease_whenTheBackendSaysItCameLater() {
    backend.onAcquire =
        call -> {
          clock.advance(Duration.ofMillis(1_800)); // answered 1.8 s after the call
          return CompletableFuture.completedFuture(
              new AcquireResult.Granted(backend.nextToken(), 1, 1_500 * MS));
        };
    Lease lease =
        client
            .lock("later", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(2)))
            .tryAcquire()
            .orElseThrow();
    assertThat(grant(lease).validUntilNanos())
        .isEqualTo(5_000 * MS + 1_500 * MS + 2_000 * MS - 22 * MS);
    assertThat(lease.isValid()).isTrue();
  }

  /** Never later than the answer: a backend's time is not this client's clock. */
  @Test
  void aLeaseStartTheBackendPlacesAfterTheAnswer_isTakenAsTheAnswer() {
    backend.onAcquire =
        call -> {
          clock.advance(Duration.ofMillis(100));
          return CompletableFuture.completedFuture(
              new AcquireResult.Granted(backend.nextToken(), 1, 900 * MS));
        };
    Lease lease =
        client
            .lock("capped", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(2)))
            .tryAcquire()
            .orElseThrow();
    assertThat(grant(lease).validUntilNanos())
        .isEqualTo(5_000 * MS + 100 * MS + 2_000 * MS - 22 * MS);
  }

  @Test
  void aNegativeLeaseStartIsRefused() {
    assertThatThrownBy(() -> new AcquireResult.Granted(1, 1, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseStartedAfterNanos");
  }

  @Test
  void validityRunsFromTheSendTimeMinusTheMargin_notFromTheAnswer() {
    answerAfter(Duration.ofMillis(40));
    Lease lease =
        client
            .lock("valid", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(10)))
            .tryAcquire()
            .orElseThrow();

    long end = 5_000 * MS + 10_000 * MS - 102 * MS;
    assertThat(grant(lease).validUntilNanos()).isEqualTo(end);
    // Sent at 5 s, answered at 5.040 s: 10 s - 102 ms - 40 ms left.
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(10_000 - 102 - 40));
    assertThat(client.heldLeases().get(0).remaining()).isEqualTo(lease.remaining());

    clock.set(end - 1);
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.VALID);
    assertThat(lease.remaining()).isEqualTo(Duration.ofNanos(1));
    lease.ensureValid();

    clock.set(end);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
    assertThat(client.lock("valid").isHeldByCurrentHolder()).isFalse();
    assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class);
  }

  @Test
  void aGrantThatArrivesAfterItsLocalEndIsReleasedAndRefused() {
    // A fixed lease: a renewal (the renewer runs on its own thread, at real-time ticks) would move
    // the validity measured below.
    LockOptions shortest = LockOptions.defaults().withFixedLease(Duration.ofMillis(100));
    answerAfter(Duration.ofMillis(97)); // exactly the local end: 100 ms - (1 ms + 2 ms)

    assertThatThrownBy(() -> client.lock("late", shortest).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("arrived after its lease of PT0.1S had run out");

    FakeBackend.AcquireCall call = backend.acquires.get(0);
    assertThat(backend.releases)
        .containsExactly(new FakeBackend.ReleaseCall("late", call.owner(), 1));
    assertThat(client.heldLeases()).isEmpty();
    assertThat(client.renewedLeaseCount()).isZero();

    answerAfter(Duration.ofMillis(96)); // one millisecond inside: granted, with 1 ms left
    Lease lease = client.lock("late", shortest).tryAcquire().orElseThrow();
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(1));
    assertThat(lease.fencingToken()).isEqualTo(2);
  }

  @Test
  void aRenewalExtendsTheValidityFromItsSendTime() {
    backend.onRenew =
        leases -> {
          clock.advance(Duration.ofMillis(25)); // the renewal's latency
          return CompletableFuture.completedFuture(java.util.Set.of());
        };
    Lease lease =
        client
            .lock("renewed", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();
    long sent = 5_000 * MS;
    assertThat(grant(lease).validUntilNanos()).isEqualTo(sent + 295 * MS);

    clock.set(sent + 100 * MS);
    await().atMost(Duration.ofSeconds(10)).until(() -> backend.renewals.size() == 1);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> grant(lease).validUntilNanos() == sent + 100 * MS + 295 * MS);
    assertThat(grant(lease).nextRenewalNanos()).isEqualTo(sent + 200 * MS);
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(295 - 25));
  }

  @Test
  void aFixedLeaseIsNeverRenewed_andEndsAtItsLocalEnd() {
    Lease lease =
        client
            .lock("fixed", LockOptions.defaults().withFixedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
    lease.onLost(told::add);
    long sent = 5_000 * MS;

    clock.set(sent + 294 * MS);
    clock.awaitRenewerTick();
    assertThat(lease.isValid()).isTrue();
    assertThat(told).isEmpty();

    clock.set(sent + 295 * MS);
    await().atMost(Duration.ofSeconds(10)).until(() -> told.size() == 1);
    assertThat(told.get(0).reason()).isEqualTo(LeaseLostEvent.Reason.LEASE_ENDED);
    assertThat(backend.renewals).isEmpty();
  }

  @Test
  void anOwnerIdReentryConfirmsTheGrantFromItsOwnSendTime() {
    backend.onAcquire = call -> CompletableFuture.completedFuture(new AcquireResult.Granted(7, 1));
    LockOptions job =
        LockOptions.defaults().withRenewedLease(Duration.ofSeconds(10)).withOwnerId("job-1");
    Lease first = client.lock("shared", job).tryAcquire().orElseThrow();
    assertThat(grant(first).validUntilNanos()).isEqualTo(5_000 * MS + 9_898 * MS);

    clock.advance(Duration.ofSeconds(3));
    Lease second = client.lock("shared", job).tryAcquire().orElseThrow();

    assertThat(grant(second)).isSameAs(grant(first));
    assertThat(grant(first).validUntilNanos()).isEqualTo(8_000 * MS + 9_898 * MS);
    assertThat(first.remaining()).isEqualTo(Duration.ofMillis(9_898));
    assertThat(grant(first).holdCount()).isEqualTo(2);
  }
}
