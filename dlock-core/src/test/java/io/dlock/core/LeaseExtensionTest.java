package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.spi.HeldLease;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Lease#extend} on a fake clock: what is sent, what the client then trusts, and how later
 * renewals follow the new length.
 */
@Timeout(60)
class LeaseExtensionTest {
  private static final long MS = 1_000_000L;

  private final FakeClock clock = new FakeClock();
  private final FakeBackend backend = new FakeBackend(clock);
  private final RecordingListener events = new RecordingListener();
  private final CoreLockClient client = backend.client(events);

  @AfterEach
  void close() {
    client.close();
  }

  private static Grant grant(Lease lease) {
    return ((LeaseHandle) lease).grant();
  }

  @Test
  void anExtensionSetsTheLeaseFromNowAndLaterRenewalsAskForTheNewLength() {
    Lease lease =
        client
            .lock("job", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();
    clock.set(50 * MS);

    lease.extend(Duration.ofMillis(900));

    assertThat(backend.renewals).hasSize(1);
    assertThat(backend.renewals.get(0).leases())
        .extracting(HeldLease::lease)
        .containsExactly(Duration.ofMillis(900));
    // Trusted from the send time, less the margin (1% + 2 ms); the next renewal at a third.
    assertThat(grant(lease).validUntilNanos()).isEqualTo(50 * MS + 900 * MS - 11 * MS);
    assertThat(grant(lease).nextRenewalNanos()).isEqualTo(50 * MS + 300 * MS);

    clock.set(350 * MS); // due: the renewal asks for the extended length, not the option's
    await().atMost(Duration.ofSeconds(10)).until(() -> backend.renewals.size() == 2);
    assertThat(backend.renewals.get(1).leases())
        .extracting(HeldLease::lease)
        .containsExactly(Duration.ofMillis(900));
    lease.release();
  }

  @Test
  void aShorterLeaseIsTrustedOnlyForItsLength() {
    Lease lease =
        client
            .lock("short", LockOptions.defaults().withFixedLease(Duration.ofSeconds(10)))
            .tryAcquire()
            .orElseThrow();

    lease.extend(Duration.ofMillis(200));

    assertThat(grant(lease).validUntilNanos()).isEqualTo(200 * MS - 4 * MS);
    assertThat(lease.remaining()).isLessThanOrEqualTo(Duration.ofMillis(200));
    lease.release();
  }

  @Test
  void anUnansweredExtensionCapsWhatTheClientTrustsUntilTheGrantEnds() {
    Lease lease =
        client
            .lock("capped", LockOptions.defaults().withRenewedLease(Duration.ofMillis(900)))
            .tryAcquire()
            .orElseThrow();
    // An extension to a shorter lease whose answer never comes: it may reach the server later.
    backend.onRenew = leases -> new CompletableFuture<>();
    assertThatThrownBy(() -> lease.extend(Duration.ofMillis(300)))
        .isInstanceOf(BackendUnavailableException.class);
    long sentAt = backend.renewals.get(0).at();
    assertThat(grant(lease).validUntilNanos()).isLessThanOrEqualTo(sentAt + 300 * MS - 5 * MS);

    // Now a longer extension that is answered: still trusted for no more than the 300 ms one.
    // (The renewer may renew in between, and after: on the fake clock every answered request is
    // sent at the same instant, so each leaves the same figures.)
    backend.onRenew = leases -> CompletableFuture.completedFuture(Set.of());
    clock.set(sentAt + 10 * MS);
    lease.extend(Duration.ofSeconds(5));
    long confirmedAt = sentAt + 10 * MS;
    assertThat(grant(lease).validUntilNanos()).isEqualTo(confirmedAt + 300 * MS - 5 * MS);
    assertThat(grant(lease).nextRenewalNanos()).isEqualTo(confirmedAt + 100 * MS);
    assertThat(backend.renewals.get(backend.renewals.size() - 1).leases())
        .extracting(HeldLease::lease)
        .containsExactly(Duration.ofSeconds(5)); // the server is still asked for the 5 s
    lease.release();
  }

  @Test
  void aRenewalOfTheUsualLengthThatGotNoAnswerCapsALaterLongerExtension() {
    Lease lease =
        client
            .lock("late-renewal", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();
    // A renewal whose answer never comes: it may still land on the server, after anything else.
    backend.onRenew = leases -> new CompletableFuture<>();
    clock.set(100 * MS);
    await().atMost(Duration.ofSeconds(10)).until(() -> backend.renewals.size() == 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> grant(lease).nextRenewalNanos() < 200 * MS);

    backend.onRenew = leases -> CompletableFuture.completedFuture(Set.of());
    lease.extend(Duration.ofSeconds(60));

    // Trusted for no more than the 300 ms the lost renewal would set, whenever it lands.
    long extendSentAt = 100 * MS;
    assertThat(grant(lease).validUntilNanos()).isLessThanOrEqualTo(extendSentAt + 300 * MS);
    lease.release();
  }

  @Test
  void anUnansweredShorterExtensionBringsTheLossSignalForward() {
    Lease lease =
        client
            .lock("short-unanswered", LockOptions.defaults().withFixedLease(Duration.ofSeconds(30)))
            .tryAcquire()
            .orElseThrow();
    backend.onRenew = leases -> new CompletableFuture<>();
    assertThatThrownBy(() -> lease.extend(Duration.ofMillis(300)))
        .isInstanceOf(BackendUnavailableException.class);

    clock.set(400 * MS); // past the shorter lease, long before the 30 s one
    await().atMost(Duration.ofSeconds(10)).until(() -> !lease.isValid() && !events.lost.isEmpty());
    assertThat(events.lost.get(0).reason()).isEqualTo(LeaseLostEvent.Reason.LEASE_ENDED);
  }

  @Test
  void anExtensionThatCannotGetItsTurnIsWithdrawnUnsent() throws Exception {
    FakeBackend quickBackend = new FakeBackend(clock);
    CoreLockClient quick =
        (CoreLockClient)
            CoreLockClient.create(
                quickBackend,
                io.dlock.LockClientOptions.defaults()
                    .withClock(clock)
                    .withOperationTimeout(Duration.ofMillis(200)));
    try {
      Lease busy =
          quick
              .lock("busy", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(3)))
              .tryAcquire()
              .orElseThrow();
      Lease other =
          quick
              .lock("other", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(3)))
              .tryAcquire()
              .orElseThrow();
      // Hold the renewal thread: a task that waits until the test lets it go.
      java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
      java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
      quick
          .renewer()
          .runOnRenewalThreadForTest(
              () -> {
                holding.countDown();
                try {
                  go.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      assertThat(holding.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      int before = quickBackend.renewals.size();

      assertThatThrownBy(() -> busy.extend(Duration.ofSeconds(10)))
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("nothing was sent");
      go.countDown();
      other.extend(Duration.ofSeconds(5)); // the thread is free again: this one goes through

      assertThat(quickBackend.renewals.subList(before, quickBackend.renewals.size()))
          .as("the withdrawn extension was never sent")
          .flatExtracting(FakeBackend.RenewCall::leases)
          .extracting(HeldLease::lockName)
          .containsExactly("other");
      busy.release();
      other.release();
    } finally {
      quick.close();
    }
  }

  @Test
  void anExtensionThatFindsTheGrantGoneReportsTheLoss() {
    Lease lease =
        client
            .lock("gone", LockOptions.defaults().withRenewedLease(Duration.ofMillis(900)))
            .tryAcquire()
            .orElseThrow();
    backend.onRenew = leases -> CompletableFuture.completedFuture(Set.copyOf(leases));

    assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(5)))
        .isInstanceOf(LockLostException.class)
        .hasMessageContaining("'gone'");

    assertThat(lease.isValid()).isFalse();
    RecordingListener.drainEventThread(client);
    assertThat(events.lost)
        .singleElement()
        .extracting(LeaseLostEvent::reason)
        .isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER);
    assertThat(lease.release()).isFalse();
  }

  @Test
  void badInputAndAReleasedLeaseAreRefusedWithoutAServerCall() {
    Lease lease = client.lock("input").tryAcquire().orElseThrow();

    assertThatThrownBy(() -> lease.extend(Duration.ofMillis(99)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lease must be from PT0.1S to PT168H, but was PT0.099S");
    assertThatThrownBy(() -> lease.extend(Duration.ofDays(8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("lease must be from");
    lease.release();
    assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("released");
    assertThat(backend.renewals).isEmpty();
  }
}
