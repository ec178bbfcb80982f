package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Timing logic driven by a fake monotonic clock instead of sleeps: local lease validity follows the
 * client's clock, and neither a clock far ahead nor far behind makes the client extend a lease.
 */
class FakeClockLeaseTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final MonotonicClock fake = now::get;

  @Test
  void leaseIsValidUntilItsEndOnTheMonotonicClockAndNotAfter() {
    // The backend's (server's) clock stands still; only the client's clock moves.
    InMemoryLockBackend backend = new InMemoryLockBackend(() -> 0L);
    try (LockClient client =
        LockClients.create(backend, LockClientOptions.defaults().withClock(fake))) {
      Lease lease =
          client
              .lock("fake-clock", LockOptions.defaults().withFixedLease(Duration.ofSeconds(30)))
              .tryAcquire()
              .orElseThrow();
      // The client trusts its lease 1% + 2 ms less than the server grants it (rate drift margin).
      Duration trusted = Duration.ofMillis(30_000 - 300 - 2);
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.remaining()).isEqualTo(trusted);

      now.addAndGet(trusted.minusMillis(1).toNanos());
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(1));

      now.addAndGet(Duration.ofMillis(1).toNanos());
      assertThat(lease.isValid()).isFalse();
      assertThat(lease.state()).isEqualTo(LeaseState.LOST);
      assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
      assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class);
      assertThatThrownBy(() -> client.lock("fake-clock").tryAcquire())
          .as("re-entering a lost grant is refused")
          .isInstanceOf(LockLostException.class);
    }
  }

  @Test
  void theServerClockJudgesExpiryTheClientClockOnlyValidity() {
    // The client's clock runs far ahead of the server's: the client stops trusting its lease (its
    // release reports the loss and returns false), but the server still holds the lock, so the
    // release frees it there (owner-checked, in the background) instead of leaking it.
    InMemoryLockBackend backend = new InMemoryLockBackend(() -> 0L);
    try (LockClient client =
            LockClients.create(backend.sharedView(), LockClientOptions.defaults().withClock(fake));
        LockClient other = LockClients.create(backend.sharedView(), LockClientOptions.defaults())) {
      Lease lease =
          client
              .lock("skew", LockOptions.defaults().withFixedLease(Duration.ofSeconds(10)))
              .tryAcquire()
              .orElseThrow();
      java.util.List<io.dlock.LeaseLostEvent> lost =
          new java.util.concurrent.CopyOnWriteArrayList<>();
      lease.onLost(lost::add);
      now.addAndGet(Duration.ofHours(3).toNanos());
      assertThat(lease.isValid()).isFalse();
      assertThat(other.lock("skew").tryAcquire()).as("server: still held").isEmpty();
      assertThat(lease.release()).isFalse();
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(
              () ->
                  assertThat(lost)
                      .singleElement()
                      .extracting(io.dlock.LeaseLostEvent::reason)
                      .isEqualTo(io.dlock.LeaseLostEvent.Reason.LEASE_ENDED));
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> other.lock("skew").tryAcquire().isPresent());
    }
  }
}
