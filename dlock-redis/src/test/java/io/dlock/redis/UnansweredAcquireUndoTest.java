package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The undo of an unanswered acquisition: retried while it cannot be sent, never after close. */
class UnansweredAcquireUndoTest {

  @Test
  void anUndoThatCannotBeSentIsRetriedUntilItIs() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<Boolean> done =
        UnansweredAcquireUndo.start(
            "x",
            Duration.ofMinutes(1),
            System.nanoTime(),
            MonotonicClock.SYSTEM,
            () -> false,
            () ->
                calls.incrementAndGet() < 3
                    ? CompletableFuture.failedFuture(new IllegalStateException("disconnected"))
                    : CompletableFuture.completedFuture(true));
    assertThat(done.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(calls).hasValue(3);
  }

  /**
   * Regression (issue 29, the review's suspicion, confirmed): after the backend closed, the undo
   * was retried with backoff until the lease ended (every 2 s for up to 7 days with a fixed lease).
   */
  @Test
  void noUndoIsRetriedOnceTheBackendIsClosed() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    AtomicBoolean closed = new AtomicBoolean(true);
    CompletableFuture<Boolean> done =
        UnansweredAcquireUndo.start(
            "x",
            Duration.ofDays(7),
            System.nanoTime(),
            MonotonicClock.SYSTEM,
            closed::get,
            () -> {
              calls.incrementAndGet();
              return CompletableFuture.failedFuture(new IllegalStateException("closed"));
            });
    assertThat(done.get(10, TimeUnit.SECONDS)).isFalse();
    // Its first retry would come 50 ms later: none comes.
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> calls.get() == 1);
  }
}
