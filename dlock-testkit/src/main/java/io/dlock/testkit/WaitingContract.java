package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Waiting and wake-ups: a wait ends at its bound, a release (not the lease end) wakes a waiter, a
 * release wakes one waiter per client rather than a herd, a waiter that gives up around a release
 * never swallows it, and closing the client ends its waits at once.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface WaitingContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void waitBoundIsHonoured() {
    LockClient holder = fixture().newClient();
    LockClient waiter = fixture().newClient();
    String lockName = fixture().name("bound");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    Duration wait = Duration.ofMillis(500);
    long start = System.nanoTime();
    assertThatThrownBy(() -> waiter.lock(lockName).acquire(wait))
        .isInstanceOf(LockTimeoutException.class)
        .hasMessageContaining(lockName);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(took).isBetween(wait, wait.plus(millis(400)));
    held.release();
  }

  @Test
  default void closingTheClientEndsABlockingWaitAtOnceAndLeavesNothingHeld() throws Exception {
    LockClient holder = fixture().newClient();
    LockClient closing = fixture().newClient();
    FaultyBackend closingLink = fixture().lastBackend();
    String lockName = fixture().name("close-wait");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread waiting =
        new Thread(
            () -> {
              try {
                closing.lock(lockName).acquire(millis(120_000)).release();
                outcome.complete(null);
              } catch (Throwable t) {
                outcome.complete(t);
              }
            },
            "contract-close-waiter");
    waiting.start();
    // Parked for a release signal (or a backoff step) after its first attempt and the one after
    // joining the waiters, not waiting for an answer: the park's blocker is the waiter.
    await()
        .atMost(millis(5000))
        .until(
            () -> {
              Object blocker = LockSupport.getBlocker(waiting);
              return closingLink.acquireCalls() >= 2
                  && blocker != null
                  && blocker.getClass().getSimpleName().equals("Waiter");
            });
    closing.close();
    // Not at the end of its two-minute wait, nor at the holder's lease end (renewed anyway).
    assertThat(outcome.get(millis(5000).toMillis(), TimeUnit.MILLISECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThat(held.isValid()).isTrue();
    held.release();
    assertThat(fixture().newClient().lock(lockName).tryAcquire()).isPresent();
  }

  @Test
  default void waiterIsWokenByTheReleaseNotByTheLeaseEnd() throws Exception {
    LockClient holder = fixture().newClient();
    LockClient waiter = fixture().newClient();
    String lockName = fixture().name("wake");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    CompletableFuture<Lease> waiting = waiter.lock(lockName).acquireAsync(millis(20_000));
    await().atMost(millis(5000)).until(() -> fixture().lastBackend().acquireCalls() >= 2);
    long released = System.nanoTime();
    held.release();
    Lease got = waiting.get(10, TimeUnit.SECONDS);
    Duration handOff = Duration.ofNanos(System.nanoTime() - released);
    // The holder's lease is 30 s: only a release signal explains a hand-off within seconds.
    assertThat(handOff).isLessThan(millis(3000));
    assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
    got.release();
  }

  @Test
  default void aReleaseWakesOneWaiterPerClientNotAHerd() throws Exception {
    LockClient holder = fixture().newClient();
    LockClient waiting = fixture().newClient();
    FaultyBackend waitingLink = fixture().lastBackend();
    assumeTrue(
        waitingLink.releaseSignals().isPresent(),
        "the backend has no release signals: waiters back off");
    String lockName = fixture().name("herd");
    int waiters = 32;
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    List<CompletableFuture<Void>> chain = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      // Each waiter releases as soon as it gets the lock, so the lock passes down the queue.
      chain.add(
          waiting.lock(lockName).acquireAsync(millis(60_000)).thenAccept(lease -> lease.release()));
    }
    // Every waiter has made its first attempt and its attempt after subscribing.
    await().atMost(millis(10_000)).until(() -> waitingLink.acquireCalls() >= 2 * waiters);
    int before = waitingLink.acquireCalls();
    held.release();
    CompletableFuture.allOf(chain.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    double perHandOff = (waitingLink.acquireCalls() - before) / (double) waiters;
    assertThat(perHandOff)
        .as("acquire attempts per hand-off with %d waiters", waiters)
        .isLessThanOrEqualTo(3.0);
  }

  @Test
  default void aWaiterLeavingAroundAReleaseNeverSwallowsIt() throws Exception {
    LockClient holder = fixture().newClient();
    LockClient waiting = fixture().newClient();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int round = 0; round < 15; round++) {
      String lockName = fixture().name("pass-on-" + round);
      // A 30 s lease: a swallowed release would leave the patient waiter asleep for 30 s.
      Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
      long shortWait = random.nextLong(20, 80);
      CompletableFuture<Lease> impatient =
          waiting.lock(lockName).acquireAsync(Duration.ofMillis(shortWait));
      CompletableFuture<Lease> patient = waiting.lock(lockName).acquireAsync(millis(20_000));
      // Release around the moment the impatient waiter gives up.
      TimeUnit.MILLISECONDS.sleep(random.nextLong(shortWait - 10, shortWait + 10));
      long released = System.nanoTime();
      held.release();
      try {
        impatient.get(millis(30_000).toMillis(), TimeUnit.MILLISECONDS).release();
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(LockTimeoutException.class);
      }
      Lease got = patient.get(millis(30_000).toMillis(), TimeUnit.MILLISECONDS);
      assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(millis(3000));
      got.release();
    }
  }
}
