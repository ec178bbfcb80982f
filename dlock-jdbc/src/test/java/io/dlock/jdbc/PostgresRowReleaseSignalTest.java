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
 * On PostgreSQL a release by another client wakes a waiter through {@code NOTIFY} in every mode, as
 * docs/jdbc.md says: the lease row's release, the session lock's unlock, and the row lock's commit
 * (its NOTIFY went missing with a refactoring on 2026-11-25, and row-mode waiters were woken only
 * by their re-check once per heartbeat interval). The re-check is set to 30 s here and the holder's
 * lease to 60 s, so nothing but the signal can grant the waiter within the bound.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PostgresRowReleaseSignalTest {

  @ParameterizedTest(name = "{0}")
  @EnumSource(JdbcLockMode.class)
  void aReleaseByAnotherClientWakesTheWaiter(JdbcLockMode mode) throws Exception {
    JdbcLockSettings settings =
        TestDatabases.settings(TestDatabases.postgres(), mode)
            .withHeartbeatInterval(Duration.ofSeconds(30));
    String name = "release-signal-" + mode + "-" + UUID.randomUUID();
    CountDownLatch waiting = new CountDownLatch(1);
    LockEventListener onWait =
        new LockEventListener() {
          @Override
          public void waiting(String lockName) {
            waiting.countDown();
          }
        };
    try (LockClient holder = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient waiter =
            JdbcLocks.newClient(settings, LockClientOptions.defaults().withEventListener(onWait))) {
      Lease held =
          holder
              .lock(name, io.dlock.LockOptions.defaults().withRenewedLease(Duration.ofSeconds(60)))
              .tryAcquire()
              .orElseThrow();
      CompletableFuture<Lease> next = waiter.lock(name).acquireAsync(Duration.ofSeconds(60));
      assertThat(waiting.await(30, TimeUnit.SECONDS)).as("the waiter waits").isTrue();
      // The waiter's attempt after it began to listen is refused while the lock is held: the
      // release must come after it to test the signal, and comes at most a moment too early
      // (then the attempt itself is granted, and the test proves less, never fails wrongly).
      await().pollDelay(Duration.ofMillis(300)).until(() -> !next.isDone());
      long released = System.nanoTime();
      assertThat(held.release()).isTrue();
      Lease got = next.get(20, TimeUnit.SECONDS);
      assertThat(Duration.ofNanos(System.nanoTime() - released))
          .as("granted by the release's signal, not by a re-check 30 s later")
          .isLessThan(Duration.ofSeconds(10));
      got.release();
    }
  }
}
