package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import io.dlock.spi.HeldLease;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The renewer's waits on the real clock, where {@link LeaseRenewerTest}'s fake clock cannot show
 * them (the waits for answers are real time). Found by review of the renewal wait bound
 * (2026-12-03): a lost call was retried only at the trusted end, where the lease was marked lost
 * instead; and a prompt answer was applied only after a silent call of another length was given up.
 */
@Timeout(60)
class LeaseRenewerRealClockTest {
  private final FakeBackend backend = new FakeBackend(new FakeClock());
  private final RecordingListener events = new RecordingListener();
  private final CoreLockClient client =
      (CoreLockClient)
          CoreLockClient.create(
              backend,
              LockClientOptions.defaults()
                  .withClock(MonotonicClock.SYSTEM)
                  .withEventListener(events));

  @AfterEach
  void close() {
    client.close();
  }

  private Lease acquire(String name, Duration lease) {
    return client
        .lock(name, LockOptions.defaults().withRenewedLease(lease))
        .tryAcquire()
        .orElseThrow();
  }

  /** One renewal call lost (never answered), every later one answered: the lease lives on. */
  @Test
  void aLostRenewalIsRetriedBeforeTheLeaseEnds() {
    AtomicInteger calls = new AtomicInteger();
    backend.onRenew =
        leases ->
            calls.getAndIncrement() == 0
                ? new CompletableFuture<>()
                : CompletableFuture.completedFuture(Set.of());
    Lease lease = acquire("lost-call", Duration.ofMillis(300));
    await()
        .during(Duration.ofMillis(700)) // more than two leases
        .atMost(Duration.ofSeconds(5))
        .until(() -> lease.isValid() && events.lost.isEmpty());
    assertThat(calls.get()).as("renewal calls made").isGreaterThanOrEqualTo(3);
  }

  /**
   * Two lengths due in one tick: the 600 ms one's call is never answered, the 330 ms one's at once;
   * the 600 ms length comes first in the tick (the order of the set of lengths). The 330 ms lease
   * must neither wait for its answer to be applied, nor for its next renewal to be sent, behind the
   * silent call (given up about 360 ms after it was sent, past the 330 ms lease's end).
   */
  @Test
  void aPromptAnswerIsNotHeldBackBehindASilentRenewalOfAnotherLength() {
    CompletableFuture<Set<HeldLease>> silent = new CompletableFuture<>();
    backend.onRenew =
        leases ->
            leases.stream().anyMatch(l -> l.lockName().equals("slow"))
                ? silent
                : CompletableFuture.completedFuture(Set.of());
    try {
      acquire("slow", Duration.ofMillis(600)); // due at 200 ms: within a sixth at 110 ms
      Lease fast = acquire("fast", Duration.ofMillis(330)); // due at 110 ms
      await()
          .during(Duration.ofMillis(700)) // two leases of the fast lock
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(
              () ->
                  assertThat(fast.isValid())
                      .as("lost: %s; calls %s", events.lost, backend.renewals)
                      .isTrue());
      assertThat(backend.renewals).as("calls sent").hasSizeGreaterThanOrEqualTo(3);
    } finally {
      silent.complete(Set.of());
    }
  }
}
