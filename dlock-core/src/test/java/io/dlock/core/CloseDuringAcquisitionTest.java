package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcquireResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A blocking acquisition whose backend call is in flight while the client closes (found by review):
 * a grant that answers after close is released, never handed out, and an attempt that finds the
 * lock held sends nothing more. Either way the caller gets {@link IllegalStateException}.
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

  @Test
  void aGrantThatAnswersAfterCloseIsReleasedAndNotHandedOut() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    backend.onAcquire = call -> answer;
    RecordingListener listener = new RecordingListener();
    CoreLockClient client = backend.client(listener);
    CompletableFuture<Object> outcome = acquireOnAThread(client);
    awaitCalls(backend, 1);

    client.close(); // copies the grants before the answer: this grant is not among them
    answer.complete(new AcquireResult.Granted(42, 1));

    assertThat(outcome.get(10, TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasFieldOrPropertyWithValue("message", "The lock client is closed");
    assertThat(backend.releases).extracting(FakeBackend.ReleaseCall::fencingToken).contains(42L);
    assertThat(listener.acquired).isEmpty();
  }

  @Test
  void anAttemptThatFindsTheLockHeldAfterCloseSendsNothingMore() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    backend.onAcquire = call -> answer;
    CoreLockClient client = backend.client();
    CompletableFuture<Object> outcome = acquireOnAThread(client);
    awaitCalls(backend, 1);

    client.close();
    answer.complete(new AcquireResult.Held(Duration.ofSeconds(30)));

    assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
    assertThat(backend.acquires).hasSize(1);
  }

  private static void awaitCalls(FakeBackend backend, int calls) {
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> backend.acquires.size() >= calls);
  }
}
