package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review of edb826f (close() with leases still held), issue 29: a hold released by its holder at
 * the moment of close() left another hold untold; a loss close()'s own release found was not
 * reported to the client's listeners; a hold ended by close() counted both released and lost.
 */
class CloseReportReviewTest {

  /**
   * releaseForClose sets lossReported before it releases; a release that then finds the grant gone
   * (NOT_HELD with holds left, or a lease run out) goes through markLost, which now believes the
   * loss was reported already: the client's listener (metrics) never hears of a real TAKEN_OVER.
   * The same release outside close() reports it.
   */
  @Test
  void aLossThatCloseItsOwnReleaseFindsIsStillReportedToTheClientListener() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.onAcquire = call -> FakeBackend.granted(7); // the owner id re-enters: same token
    backend.releaseAnswer = ReleaseResult.NOT_HELD; // force-released on the server meanwhile
    RecordingListener events = new RecordingListener();
    CoreLockClient client = backend.client(events);
    LockOptions job = LockOptions.defaults().withOwnerId("job");
    Lease outer = client.lock("x", job).tryAcquire().orElseThrow();
    Lease inner = client.lock("x", job).tryAcquire().orElseThrow();
    assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
    List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
    outer.onLost(told::add);

    client.close();

    await().atMost(Duration.ofSeconds(5)).until(() -> !told.isEmpty());
    assertThat(told)
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER));
    await("the client's listener hears of the loss")
        .atMost(Duration.ofSeconds(3))
        .until(() -> !events.lost.isEmpty()); // fails: lossReported was set before the release
  }

  /**
   * A hold ended by close() is reported both as released (dlock.hold timer) and as lost
   * (dlock.leases.lost): MicrometerLockMetrics documents "a hold that was lost is counted by
   * dlock.leases.lost instead", and OpenTelemetryLockTracing ends the hold span as a normal release
   * (released() pops it, lost() then finds nothing), so the two listeners disagree.
   */
  @Test
  void aHoldEndedByCloseIsNotAlsoReportedAsReleased() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    RecordingListener events = new RecordingListener();
    CoreLockClient client = backend.client(events);
    client.lock("job").tryAcquire().orElseThrow();

    client.close();

    await().atMost(Duration.ofSeconds(5)).until(() -> !events.lost.isEmpty());
    assertThat(events.released).as("counted as lost instead").isEmpty(); // fails: both
  }

  /** Blocks the armed thread at its next clock read until released. */
  static final class GateClock implements MonotonicClock {
    volatile Thread blockOn;
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch go = new CountDownLatch(1);

    @Override
    public long nanoTime() {
      if (Thread.currentThread() == blockOn) {
        blockOn = null;
        entered.countDown();
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return System.nanoTime();
    }
  }

  /**
   * Two threads share an owner id's grant (two holds). At shutdown one finishes and releases its
   * hold while close() runs: close() ends the other hold (ENDED_BY_CLOSE), then meets the first
   * hold already CASed to RELEASED_BY_HOLDER but not yet removed, counts that as "told by release"
   * (and busy-spins until the holder removes it), and returns without telling anyone. The hold
   * whose holder did not let go ends RELEASED, not LOST: no CLIENT_CLOSED to its listener, no
   * report, and the starter's LockedReleases.wasLost (= !isValid && state != RELEASED) says false,
   * so a @Locked @Transactional method commits work done after its lock was given back.
   */
  @Test
  void aHoldEndedByCloseIsToldEvenIfAnotherHoldIsReleasedByItsHolderMeanwhile() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.onAcquire = call -> FakeBackend.granted(7);
    AtomicInteger releases = new AtomicInteger();
    backend.onRelease =
        call ->
            CompletableFuture.completedFuture(
                releases.incrementAndGet() == 1
                    ? ReleaseResult.STILL_HELD
                    : ReleaseResult.RELEASED);
    GateClock clock = new GateClock();
    RecordingListener events = new RecordingListener();
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(
                backend, LockClientOptions.defaults().withClock(clock).withEventListener(events));
    LockOptions job = LockOptions.defaults().withOwnerId("job");
    Lease first = client.lock("x", job).tryAcquire().orElseThrow(); // worker 1's hold
    Lease second = client.lock("x", job).tryAcquire().orElseThrow(); // worker 2's hold
    List<LeaseLostEvent> secondTold = new CopyOnWriteArrayList<>();
    second.onLost(secondTold::add);

    Thread worker1 =
        new Thread(
            () -> {
              clock.blockOn = Thread.currentThread();
              first.release(); // done, at the moment the application shuts down
            },
            "worker-1");
    worker1.start();
    assertThat(clock.entered.await(10, TimeUnit.SECONDS)).isTrue(); // CASed, not yet removed
    Thread closer = new Thread(client::close, "closer");
    closer.start();
    // close() ended worker 2's hold (STILL_HELD: worker 1's is still counted on the server) and
    // leaves worker 1's, which its holder is releasing, waiting for that release.
    await().atMost(Duration.ofSeconds(10)).until(() -> backend.releases.size() == 1);
    clock.go.countDown();
    worker1.join(10_000);
    closer.join(10_000);

    assertThat(second.state()).as("ended by close under its holder").isEqualTo(LeaseState.LOST);
    await().atMost(Duration.ofSeconds(3)).until(() -> !secondTold.isEmpty());
    assertThat(secondTold)
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.CLIENT_CLOSED));
  }
}
