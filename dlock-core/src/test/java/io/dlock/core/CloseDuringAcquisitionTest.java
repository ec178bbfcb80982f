package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcquireResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A blocking acquisition whose backend call is in flight while the client closes (found by review):
 * close() waits for it, bounded; a grant that answers meanwhile is released before the backend
 * closes, never handed out, and an attempt that finds the lock held sends nothing more. Either way
 * the caller gets {@link IllegalStateException}.
 */
class CloseDuringAcquisitionTest {

  /** Runs a one-minute acquire of {@code x} on its own thread; completes with its outcome. */
  private static CompletableFuture<Object> acquireOnAThread(CoreLockClient client) {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    new Thread(
            () -> {
              try {
                outcome.complete(client.lock("x").acquire(Duration.ofMinutes(1)));
              } catch (Throwable t) {
                outcome.complete(t);
              }
            },
            "close-during-acquisition")
        .start();
    return outcome;
  }

  /**
   * Regression (issue 29, finding 4): close() waited for asynchronous steps but not for a caller's
   * attempt in flight, and closed the backend under it: the server granted, the answer was dropped,
   * no release could be sent, and the lock stayed held by nobody for its whole lease. Now close()
   * waits (bounded) for the attempt, whose thread gives the grant back while the backend is still
   * open.
   */
  @Test
  void closeWaitsForAnAttemptInFlightWhichGivesItsGrantBackBeforeTheBackendCloses()
      throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    backend.onAcquire = call -> answer;
    RecordingListener listener = new RecordingListener();
    CoreLockClient client = backend.client(listener);
    CompletableFuture<Object> outcome = acquireOnAThread(client);
    awaitCalls(backend, 1);

    // close() has begun: the client refuses new work; it now waits for the attempt in flight.
    CompletableFuture<Void> closing = startClosing(client);
    assertThat(closing).as("close() waits for the attempt").isNotDone();
    assertThat(backend.closed).isFalse();
    answer.complete(new AcquireResult.Granted(42, 1));
    closing.get(10, TimeUnit.SECONDS);

    assertThat(outcome.get(10, TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasFieldOrPropertyWithValue("message", "The lock client is closed");
    assertThat(backend.releases)
        .as("released while the backend was open")
        .extracting(FakeBackend.ReleaseCall::fencingToken)
        .contains(42L);
    assertThat(backend.closed).isTrue();
    assertThat(listener.acquired).isEmpty();
  }

  /**
   * An attempt that is never answered holds close() up for at most twice the operation timeout (its
   * attempt and its release); then the backend closes under it and the caller is told.
   */
  @Test
  void anAttemptNeverAnsweredHoldsCloseUpForAtMostTwiceTheOperationTimeout() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    backend.onAcquire = call -> new CompletableFuture<>();
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(
                backend,
                io.dlock.LockClientOptions.defaults()
                    .withClock(backend.clock)
                    .withOperationTimeout(Duration.ofMillis(200)));
    CompletableFuture<Object> outcome = acquireOnAThread(client);
    awaitCalls(backend, 1);

    long start = System.nanoTime();
    client.close();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(backend.closed).isTrue();
    assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(RuntimeException.class);
  }

  /**
   * close() called by an acquisition's own listener, on the acquiring thread (found by review): it
   * does not wait for that thread, which is inside the acquisition, for twice the operation
   * timeout.
   */
  @Test
  void closeFromAnAcquisitionsListenerDoesNotWaitForItsOwnThread() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    backend.onAcquire = call -> FakeBackend.held(null);
    java.util.concurrent.atomic.AtomicReference<CoreLockClient> self =
        new java.util.concurrent.atomic.AtomicReference<>();
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(
                backend,
                io.dlock.LockClientOptions.defaults()
                    .withClock(backend.clock)
                    .withOperationTimeout(Duration.ofSeconds(30))
                    .withEventListener(
                        new io.dlock.LockEventListener() {
                          @Override
                          public void notAcquired(
                              String lockName, AcquireFailure failure, Duration latency) {
                            self.get().close(); // e.g. giving up on a failing backend
                          }
                        }));
    self.set(client);
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                outcome.complete(client.lock("x").tryAcquire());
              } catch (Throwable e) {
                outcome.complete(e);
              }
            });
    t.start();
    // Twice the operation timeout would be a minute: the attempt ends well before.
    assertThat(outcome.get(20, TimeUnit.SECONDS)).isNotNull();
    assertThat(backend.closed).isTrue();
  }

  /** Closes {@code client} on another thread; returns once close() has begun. */
  private static CompletableFuture<Void> startClosing(CoreLockClient client) {
    CompletableFuture<Void> closing = CompletableFuture.runAsync(client::close);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> isClosed(client));
    return closing;
  }

  private static boolean isClosed(CoreLockClient client) {
    try {
      client.ensureOpen();
      return false;
    } catch (IllegalStateException e) {
      return true;
    }
  }

  @Test
  void anAttemptThatFindsTheLockHeldAfterCloseSendsNothingMore() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    backend.onAcquire = call -> answer;
    CoreLockClient client = backend.client();
    CompletableFuture<Object> outcome = acquireOnAThread(client);
    awaitCalls(backend, 1);

    CompletableFuture<Void> closing = startClosing(client);
    answer.complete(new AcquireResult.Held(Duration.ofSeconds(30)));
    closing.get(10, TimeUnit.SECONDS);

    assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
    assertThat(backend.acquires).hasSize(1);
  }

  private static void awaitCalls(FakeBackend backend, int calls) {
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> backend.acquires.size() >= calls);
  }
}
