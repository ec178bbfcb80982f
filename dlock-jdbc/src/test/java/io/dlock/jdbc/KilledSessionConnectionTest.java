package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The database ends the connection that holds a session lock ({@code pg_terminate_backend}, {@code
 * KILL}): the database frees the lock, the next waiter gets it, and the old holder is told its
 * lease is lost within a heartbeat interval (fixed lease) or a renewal interval (renewed lease),
 * plus a tolerance.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KilledSessionConnectionTest {
  private static final Duration HEARTBEAT = Duration.ofMillis(200);

  @Test
  void postgresFixedLeaseHolderLearnsItFromTheHeartbeat() throws Exception {
    killHolderConnection(TestDatabases.postgres(), false);
  }

  @Test
  void postgresRenewedLeaseHolderLearnsItFromItsRenewal() throws Exception {
    killHolderConnection(TestDatabases.postgres(), true);
  }

  @Test
  void mariaDbFixedLeaseHolderLearnsItFromTheHeartbeat() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    killHolderConnection(TestDatabases.mariaDb().orElseThrow(), false);
  }

  @Test
  void mariaDbRenewedLeaseHolderLearnsItFromItsRenewal() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    killHolderConnection(TestDatabases.mariaDb().orElseThrow(), true);
  }

  private static void killHolderConnection(String url, boolean renewed) throws Exception {
    JdbcLockSettings settings =
        TestDatabases.settings(url, JdbcLockMode.SESSION).withHeartbeatInterval(HEARTBEAT);
    Duration renewedLease = Duration.ofSeconds(3);
    LockOptions options =
        renewed
            ? LockOptions.defaults().withRenewedLease(renewedLease)
            : LockOptions.defaults().withFixedLease(Duration.ofMinutes(5));
    // How soon the holder must hear of it: its check interval, plus a tolerance.
    Duration checkInterval = renewed ? renewedLease.dividedBy(3) : HEARTBEAT;
    try (LockClient holder = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient waiter = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      String name = "killed-" + UUID.randomUUID();
      Lease held = holder.lock(name, options).tryAcquire().orElseThrow();
      AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
      AtomicLong lostAt = new AtomicLong();
      CountDownLatch told = new CountDownLatch(1);
      held.onLost(
          event -> {
            lostAt.set(System.nanoTime());
            lost.set(event);
            told.countDown();
          });
      CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync(millis(30_000));
      assertThat(waiting).isNotDone();

      long killedAt = System.nanoTime();
      HeldSessions.end(url, HeldSessions.idOf(url, name));

      Lease next = waiting.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(told.await(millis(10_000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
      assertThat(Duration.ofNanos(lostAt.get() - killedAt))
          .as("time until the holder was told")
          .isLessThan(checkInterval.plus(millis(1000)));
      // A renewed lease is checked by the heartbeat until its first renewal, then by renewals
      // (which report the lock gone: TAKEN_OVER); a fixed lease by the heartbeat alone.
      assertThat(lost.get().reason())
          .isIn(
              renewed
                  ? new Object[] {
                    LeaseLostEvent.Reason.SESSION_LOST, LeaseLostEvent.Reason.TAKEN_OVER
                  }
                  : new Object[] {LeaseLostEvent.Reason.SESSION_LOST});
      assertThat(held.isValid()).isFalse();
      assertThat(held.release()).as("nothing to release: the database freed it").isFalse();
      assertThat(next.release()).isTrue();
    }
  }
}
