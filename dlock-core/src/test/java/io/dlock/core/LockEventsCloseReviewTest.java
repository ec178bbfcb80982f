package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockEventListener;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review of a7972a4: close() now waits (up to a second) for the listener's thread to tell the
 * events queued before it. Called from that very thread (a listener that closes the client, or
 * shuts the application down, when a lease is lost), it waited for itself: a second, every time,
 * and a warning that events may be lost when none were.
 */
@Timeout(60)
class LockEventsCloseReviewTest {

  @Test
  void closeFromTheListenersOwnThreadDoesNotWaitForItself() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.releaseAnswer = ReleaseResult.NOT_HELD; // the release finds the lease lost
    AtomicReference<CoreLockClient> client = new AtomicReference<>();
    CompletableFuture<Duration> closeTook = new CompletableFuture<>();
    LockEventListener closesOnLoss =
        new LockEventListener() {
          @Override
          public void lost(LeaseLostEvent event) {
            long start = System.nanoTime();
            client.get().close();
            closeTook.complete(Duration.ofNanos(System.nanoTime() - start));
          }
        };
    client.set(backend.client(closesOnLoss));

    Lease lease = client.get().lock("gone").tryAcquire().orElseThrow();
    assertThat(lease.release()).isFalse(); // told as lost, on the listener's thread

    // It waited the whole second for its own thread to end: at least 1 s, whatever the machine.
    assertThat(closeTook.get(10, TimeUnit.SECONDS)).isLessThan(Duration.ofMillis(900));
  }

  /**
   * The same for the client's own thread of lost-lease callbacks ({@code Lease.onLost}), whose
   * close() waited a second for itself before a7972a4 already.
   */
  @Test
  void closeFromALostLeaseCallbackDoesNotWaitForItsOwnThread() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.releaseAnswer = ReleaseResult.NOT_HELD;
    CoreLockClient client = backend.client();
    CompletableFuture<Duration> closeTook = new CompletableFuture<>();
    Lease lease = client.lock("gone").tryAcquire().orElseThrow();
    lease.onLost(
        event -> {
          long start = System.nanoTime();
          client.close();
          closeTook.complete(Duration.ofNanos(System.nanoTime() - start));
        });

    assertThat(lease.release()).isFalse();

    assertThat(closeTook.get(10, TimeUnit.SECONDS)).isLessThan(Duration.ofMillis(900));
  }
}
