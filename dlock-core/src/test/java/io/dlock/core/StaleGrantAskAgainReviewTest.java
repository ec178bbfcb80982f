package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClientOptions;
import io.dlock.spi.AcquireResult;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review of 1d0cf0c: a single attempt whose grant is answered stale asks once more. The second
 * request got a whole operation timeout of its own, so a tryAcquire answered late (but within its
 * bound) and then not at all took up to twice the operation timeout, against "BackendUnavailable if
 * the backend did not answer within the client's operation timeout".
 */
@Timeout(60)
class StaleGrantAskAgainReviewTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

  @Test
  void askingAgainAfterAStaleGrantStaysWithinTheAttemptsOperationTimeout() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CompletableFuture<AcquireResult> late = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    backend.onAcquire =
        call ->
            switch (calls.incrementAndGet()) {
              case 1 -> late;
              case 2 -> FakeBackend.granted(6);
              default -> new CompletableFuture<>(); // the server answers no more
            };
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(
                backend,
                LockClientOptions.defaults()
                    .withClock(backend.clock)
                    .withOperationTimeout(OPERATION_TIMEOUT));
    try {
      long start = System.nanoTime();
      CompletableFuture<Object> first = OnAnotherThread.call(() -> client.lock("x").tryAcquire());
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> calls.get() == 1);
      Lease newer = client.lock("x").tryAcquire().orElseThrow(); // fencing token 6
      // The older grant is answered late, still within the first attempt's bound (a slow server).
      CompletableFuture.delayedExecutor(1600, TimeUnit.MILLISECONDS)
          .execute(() -> late.complete(new AcquireResult.Granted(5, 1)));

      Object outcome = first.get(20, TimeUnit.SECONDS);
      Duration took = Duration.ofNanos(System.nanoTime() - start);

      assertThat(outcome)
          .as("not acquired (held), or the server did not answer")
          .satisfiesAnyOf(
              o -> assertThat(o).isEqualTo(Optional.empty()),
              o -> assertThat(o).isInstanceOf(BackendUnavailableException.class));
      assertThat(took)
          .as(
              "within the operation timeout of %s (and some slack), not twice it",
              OPERATION_TIMEOUT)
          .isLessThan(OPERATION_TIMEOUT.plusMillis(1200));
      assertThat(newer.release()).isTrue();
    } finally {
      client.close();
    }
  }
}
