package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockEventListener.AcquireFailure;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Issue 30, item 4: an application whose lock server is down at start-up starts anyway; calls fail
 * with {@link BackendUnavailableException} within their bound until the server answers, and then
 * work without a restart.
 */
class DeferredLockClientTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(300);

  private final RecordingListener events = new RecordingListener();
  private final LockClientOptions options =
      LockClientOptions.defaults()
          .withOperationTimeout(OPERATION_TIMEOUT)
          .withEventListener(events);
  private final AtomicBoolean serverUp = new AtomicBoolean();
  private final AtomicInteger attempts = new AtomicInteger();
  private final AtomicReference<FakeBackend> made = new AtomicReference<>();

  /** Connects to the fake server while it is up; refused (as a driver refuses) while it is down. */
  private final Supplier<LockClient> connect =
      () -> {
        attempts.incrementAndGet();
        if (!serverUp.get()) {
          throw new BackendUnavailableException("connection refused: 127.0.0.1:1");
        }
        FakeBackend backend = new FakeBackend(new FakeClock());
        made.set(backend);
        return backend.client();
      };

  @Test
  void aServerUpAtStartGivesThePlainClient() {
    serverUp.set(true);
    try (LockClient client = LockClients.connectLater("fake", "fake://up", connect, options)) {
      assertThat(client).isInstanceOf(CoreLockClient.class);
      assertThat(client.lock("job").tryAcquire()).isPresent();
    }
  }

  @Test
  void aServerDownAtStartFailsCallsUntilItComesThenWorksWithoutARestart() {
    try (LockClient client = LockClients.connectLater("fake", "fake://down", connect, options)) {
      assertThat(client).isInstanceOf(DeferredLockClient.class);
      assertThat(client.backendName()).isEqualTo("fake");
      assertThat(client.heldLeases()).isEmpty();
      assertThatThrownBy(() -> client.lock("job").tryAcquire())
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("Not connected to fake://down")
          .hasMessageContaining("connection refused");
      assertThat(events.notAcquired)
          .singleElement()
          .satisfies(e -> assertThat(e.failure()).isEqualTo(AcquireFailure.BACKEND_UNAVAILABLE));

      serverUp.set(true);
      // The next attempt: the background's, or a call's once a second has passed since the last.
      Lease lease =
          await()
              .atMost(Duration.ofSeconds(5))
              .pollInSameThread() // the hold is this thread's
              .ignoreExceptionsInstanceOf(BackendUnavailableException.class)
              .until(() -> client.lock("job").tryAcquire(), Optional::isPresent)
              .orElseThrow();
      assertThat(client.heldLeases()).hasSize(1);
      assertThat(client.lock("job").isHeldByCurrentHolder()).isTrue();
      assertThat(lease.release()).isTrue();
    }
    assertThat(made.get().closed).as("closing the client closes the one it connected").isTrue();
  }

  @Test
  void callsOnADownServerStartAtMostOneAttemptASecond() {
    try (LockClient client = LockClients.connectLater("fake", "fake://down", connect, options)) {
      long start = System.nanoTime();
      for (int i = 0; i < 200; i++) {
        assertThatThrownBy(() -> client.lock("job").tryAcquire())
            .isInstanceOf(BackendUnavailableException.class);
      }
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      // The first attempt, one a call may start each second, one of the background's each second.
      assertThat(attempts.get()).isLessThanOrEqualTo(1 + 2 * (int) (seconds + 1));
    }
  }

  @Test
  void theBackgroundConnectsWithoutAnyCall() {
    try (LockClient client = LockClients.connectLater("fake", "fake://down", connect, options)) {
      serverUp.set(true);
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> ((DeferredLockClient) client).connected() != null);
      assertThat(client.lock("job").tryAcquire()).isPresent();
    }
  }

  @Test
  void aMisconfigurationFailsTheStartAsBefore() {
    Supplier<LockClient> misconfigured =
        () -> {
          throw new IllegalArgumentException("keyPrefix must not be empty");
        };
    assertThatThrownBy(() -> LockClients.connectLater("fake", "fake://x", misconfigured, options))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("keyPrefix must not be empty");
  }

  @Test
  void aSilentServerNeitherHoldsTheStartNorACallPastItsBound() throws Exception {
    CountDownLatch answer = new CountDownLatch(1);
    Supplier<LockClient> silent = answeringAfter(answer);
    long start = System.nanoTime();
    try (LockClient client = LockClients.connectLater("fake", "fake://silent", silent, options)) {
      assertThat(client).isInstanceOf(DeferredLockClient.class);
      long calledAt = System.nanoTime();
      assertThatThrownBy(() -> client.lock("job").acquire(Duration.ofMillis(200)))
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("within the call's bound of 200 ms");
      assertThat(Duration.ofNanos(System.nanoTime() - calledAt)).isLessThan(Duration.ofSeconds(2));
      CompletableFuture<Lease> async = client.lock("job").acquireAsync(Duration.ofMillis(100));
      assertThatThrownBy(() -> async.get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(BackendUnavailableException.class);

      serverUp.set(true);
      answer.countDown();
      Lease lease = client.lock("job").acquire(Duration.ofSeconds(5));
      assertThat(lease.fencingToken()).isPositive();
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void aClientMadeAfterCloseIsClosedAndACallWaitingForItEnds() throws Exception {
    CountDownLatch answer = new CountDownLatch(1);
    serverUp.set(true);
    Supplier<LockClient> slow = answeringAfter(answer);
    LockClient client = LockClients.connectLater("fake", "fake://slow", slow, options);
    CompletableFuture<Lease> waiting = client.lock("job").acquireAsync(Duration.ofSeconds(30));

    client.close();

    assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalStateException.class);
    answer.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> made.get() != null && made.get().closed);
    assertThat(made.get().releases).isEmpty();
  }

  @Test
  void anAsyncAcquisitionCancelledWhileItConnectsTakesNothing() throws Exception {
    CountDownLatch answer = new CountDownLatch(1);
    serverUp.set(true);
    Supplier<LockClient> slow = answeringAfter(answer);
    try (LockClient client = LockClients.connectLater("fake", "fake://slow", slow, options)) {
      CompletableFuture<Lease> waiting = client.lock("job").acquireAsync(Duration.ofSeconds(30));
      waiting.cancel(false);
      answer.countDown();
      await().atMost(Duration.ofSeconds(5)).until(() -> made.get() != null);
      assertThat(client.lock("job").tryAcquire()).as("nobody holds it").isPresent();
    }
  }

  /** A server that answers a connection once {@code answer} is counted down, as it is then. */
  private Supplier<LockClient> answeringAfter(CountDownLatch answer) {
    return () -> {
      try {
        answer.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return connect.get();
    };
  }
}
