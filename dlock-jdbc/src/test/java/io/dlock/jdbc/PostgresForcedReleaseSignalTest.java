package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockEventListener;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Review of 7c05a32: a forced release (by a third client, an operator) frees the lock and clears the
 * grant's record, but in the connection-bound modes on PostgreSQL it sends no NOTIFY
 * (ConnectionBoundLocks.forceRelease calls HeldLockStatements.clearRecord, which has no pg_notify),
 * so a waiter of another client is granted only at its re-check a heartbeat interval later. Lease-row
 * mode notifies (PostgresLeaseRowStatements.forcedRelease). Same shape as
 * PostgresRowReleaseSignalTest: re-check at 30 s, holder lease 60 s.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PostgresForcedReleaseSignalTest {

  @ParameterizedTest(name = "{0}")
  @EnumSource(JdbcLockMode.class)
  void aForcedReleaseWakesTheWaiterOfAnotherClient(JdbcLockMode mode) throws Exception {
    JdbcLockSettings settings =
        TestDatabases.settings(TestDatabases.postgres(), mode)
            .withHeartbeatInterval(Duration.ofSeconds(30));
    String name = "forced-signal-" + mode + "-" + UUID.randomUUID();
    CountDownLatch waiting = new CountDownLatch(1);
    LockEventListener onWait =
        new LockEventListener() {
          @Override
          public void waiting(String lockName) {
            waiting.countDown();
          }
        };
    try (LockClient holder = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient admin = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient waiter =
            JdbcLocks.newClient(settings, LockClientOptions.defaults().withEventListener(onWait))) {
      holder
          .lock(name, io.dlock.LockOptions.defaults().withRenewedLease(Duration.ofSeconds(60)))
          .tryAcquire()
          .orElseThrow();
      CompletableFuture<Lease> next = waiter.lock(name).acquireAsync(Duration.ofSeconds(60));
      assertThat(waiting.await(30, TimeUnit.SECONDS)).as("the waiter waits").isTrue();
      // generous: the waiter's LISTEN and its attempt after it are in place
      await().pollDelay(Duration.ofMillis(2000)).until(() -> !next.isDone());
      long forced = System.nanoTime();
      assertThat(admin.forceRelease(name)).as("the forced release found the holder").isPresent();
      Lease got = next.get(20, TimeUnit.SECONDS);
      assertThat(Duration.ofNanos(System.nanoTime() - forced))
          .as("granted by a release signal, not by a re-check 30 s later")
          .isLessThan(Duration.ofSeconds(10));
      got.release();
    }
  }
}
