package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariPoolMXBean;
import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Row locks: waiters give up at their bound (the database never makes them wait: {@code NOWAIT} or
 * {@code SKIP LOCKED}) and hold no connection afterwards; a client never holds more than {@code
 * maxHeldLocks} connections for its locks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RowLockWaitersTest {

  @Test
  void h2WaitersGiveUpAtTheirBoundHoldingNoConnection() throws Exception {
    waitersGiveUpAtTheirBound(TestDatabases.H2_URL);
  }

  @Test
  void postgresWaitersGiveUpAtTheirBoundHoldingNoConnection() throws Exception {
    waitersGiveUpAtTheirBound(TestDatabases.postgres());
  }

  @Test
  void mariaDbWaitersGiveUpAtTheirBoundHoldingNoConnection() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    waitersGiveUpAtTheirBound(TestDatabases.mariaDb().orElseThrow());
  }

  private static void waitersGiveUpAtTheirBound(String url) throws Exception {
    JdbcLockSettings settings = TestDatabases.settings(url, JdbcLockMode.ROW);
    JdbcLockBackend waiterBackend = JdbcLockBackend.connect(settings);
    HikariPoolMXBean pool = waiterBackend.poolStats();
    // PostgreSQL keeps one connection for LISTEN once a waiter watches for releases.
    int listening = waiterBackend.releaseSignals().isPresent() ? 1 : 0;
    ExecutorService threads = Executors.newFixedThreadPool(6);
    try (LockClient holder = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient waiter = LockClients.create(waiterBackend, LockClientOptions.defaults())) {
      String name = "row-waiters-" + UUID.randomUUID();
      Lease held = holder.lock(name).tryAcquire().orElseThrow();
      Duration wait = Duration.ofMillis(300);
      List<Future<Duration>> waits = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        waits.add(
            threads.submit(
                () -> {
                  long start = System.nanoTime();
                  assertThatThrownBy(() -> waiter.lock(name).acquire(wait))
                      .isInstanceOf(LockTimeoutException.class);
                  return Duration.ofNanos(System.nanoTime() - start);
                }));
      }
      for (Future<Duration> took : waits) {
        assertThat(took.get(30, TimeUnit.SECONDS)).isBetween(wait, wait.plus(millis(700)));
      }
      await()
          .atMost(millis(3000))
          .untilAsserted(() -> assertThat(pool.getActiveConnections()).isEqualTo(listening));
      assertThat(waiter.heldLeases()).isEmpty();
      assertThat(held.release()).isTrue();
      CompletableFuture<Lease> after = waiter.lock(name).acquireAsync(millis(5000));
      Lease got = after.get(10, TimeUnit.SECONDS);
      assertThat(pool.getActiveConnections())
          .as("the grant's own connection")
          .isEqualTo(1 + listening);
      assertThat(got.release()).isTrue();
      assertThat(pool.getActiveConnections()).isEqualTo(listening);
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aClientHoldsAtMostMaxHeldLocksAndSaysSo() {
    JdbcLockSettings settings =
        TestDatabases.settings(TestDatabases.H2_URL, JdbcLockMode.ROW).withMaxHeldLocks(2);
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      String prefix = "max-held-" + UUID.randomUUID() + "-";
      Lease a = client.lock(prefix + "a").tryAcquire().orElseThrow();
      Lease b = client.lock(prefix + "b").tryAcquire().orElseThrow();
      assertThatThrownBy(() -> client.lock(prefix + "c").tryAcquire())
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("withMaxHeldLocks");
      assertThat(a.release()).isTrue();
      Lease c = client.lock(prefix + "c").tryAcquire().orElseThrow();
      assertThat(b.release()).isTrue();
      assertThat(c.release()).isTrue();
    }
  }
}
