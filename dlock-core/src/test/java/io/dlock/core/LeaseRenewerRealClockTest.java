package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
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
 * instead; a prompt answer was applied only after a silent call of another length was given up;
 * and, once answers were applied as they came, a backend failing at once was asked in a loop, and a
 * short lease was lost behind a silent call once the tick had stopped sending.
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

  /**
   * One lease, every renewal failing at once. A retry gap is 200 ms: some ten calls in the lease.
   * In the last half gap before the trusted end, renewalFailed sets the retry at "now": the ticks
   * then run back to back, each a call, until the end.
   */
  @Test
  void aBackendFailingAtOnceIsNotAskedInALoopBeforeTheEnd() {
    AtomicInteger calls = new AtomicInteger();
    backend.onRenew =
        leases -> {
          calls.incrementAndGet();
          return CompletableFuture.failedFuture(new BackendUnavailableException("down"));
        };
    Lease lease = acquire("one", Duration.ofSeconds(2));
    await().atMost(Duration.ofSeconds(10)).until(() -> !lease.isValid() && !events.lost.isEmpty());
    assertThat(calls.get()).as("renewal calls in one 2 s lease, gap 200 ms").isLessThan(40);
  }

  /**
   * Two lengths: the 600 ms lease's call is silent (waited ~370 ms), the 900 ms lease's calls fail
   * at once. Within the tick, a failed grant's retry (now + gap) is "due" at once (due counts from
   * a sixth of the lease before it, and a gap is a tenth): it is sent again at once, in a loop,
   * until the silent call is given up.
   */
  @Test
  void aFailingLengthIsNotAskedInALoopWhileAnotherLengthsCallIsPending() {
    CompletableFuture<Set<HeldLease>> silent = new CompletableFuture<>();
    AtomicInteger failing = new AtomicInteger();
    backend.onRenew =
        leases -> {
          if (leases.stream().anyMatch(l -> l.lockName().equals("slow"))) {
            return silent;
          }
          failing.incrementAndGet();
          return CompletableFuture.failedFuture(new BackendUnavailableException("down"));
        };
    try {
      acquire("slow", Duration.ofMillis(600));
      Lease fast = acquire("fast", Duration.ofMillis(900));
      await().atMost(Duration.ofSeconds(10)).until(() -> !fast.isValid());
      assertThat(failing.get())
          .as("calls for the 900 ms lease (retry gap 90 ms), failing at once")
          .isLessThan(40);
    } finally {
      silent.complete(Set.of());
    }
  }

  /**
   * Operation timeout 1 s. The 6 s lease's call is silent (waited the whole operation timeout); the
   * 300 ms lease's calls are answered at once. After half the operation timeout the tick sends
   * nothing more, and the 300 ms lease runs out before the silent call is given up.
   */
  @Test
  void aShortLeaseIsNotLostBehindASilentCallPastHalfTheOperationTimeout() {
    CoreLockClient c =
        (CoreLockClient)
            CoreLockClient.create(
                backend,
                LockClientOptions.defaults()
                    .withClock(MonotonicClock.SYSTEM)
                    .withOperationTimeout(Duration.ofSeconds(1))
                    .withEventListener(events));
    CompletableFuture<Set<HeldLease>> silent = new CompletableFuture<>();
    backend.onRenew =
        leases ->
            leases.stream().anyMatch(l -> l.lockName().equals("slow6"))
                ? silent
                : CompletableFuture.completedFuture(Set.of());
    try {
      c.lock("slow6", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(6)))
          .tryAcquire()
          .orElseThrow();
      Lease fast =
          c.lock("fast300", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
              .tryAcquire()
              .orElseThrow();
      await()
          .during(Duration.ofMillis(2500))
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(fast.isValid()).as("lost: %s", events.lost).isTrue());
    } finally {
      silent.complete(Set.of());
      c.close();
    }
  }
}
