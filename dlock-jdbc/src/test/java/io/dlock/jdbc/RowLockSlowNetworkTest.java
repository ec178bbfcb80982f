package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A row-mode lock over a slow network path (the torture suite's {@code delay}: a tenth of the lease
 * each way), which is no fault: it must be granted over it, and not be reported lost.
 *
 * <p>Regression of the postgres-row election soak under {@code delay} (2026-12-03: 5 terms revoked
 * EXPIRED with no fault): a row-mode grant is several round trips (the locking transaction, then
 * the grant's record through another connection, whose statement starts the lease on the server),
 * and counted from the call, the lease was mostly spent before the grant was answered; its first
 * renewal came back after it. The lease is now counted from the record's statement ({@code
 * AcquireResult.Granted#leaseStartedAfterNanos}); a renewal is the record's statement alone, which
 * confirms the holding session on the server, sent without waiting for a heartbeat on the holding
 * connection; and the core waits for a renewal's answer until a tenth of the lease before its end,
 * not a third of the lease (the pool's validation of a connection idle since the last renewal makes
 * it two round trips).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RowLockSlowNetworkTest {
  // Renewals every 533 ms: the pool validates a connection idle over 500 ms, a round trip more.
  // PostgreSQL only: MariaDB's row-mode renewal statement runs in its contract suites, and the
  // slow path costs the same there (the module's time budget).
  private static final Duration LEASE = Duration.ofMillis(1_600);

  @Test
  void postgresGrantsARowLockOverADelayedPathAndKeepsIt() throws Exception {
    grantsARowLockOverADelayedPathAndKeepsIt(TestDatabases.postgres());
  }

  private static void grantsARowLockOverADelayedPathAndKeepsIt(String url) throws Exception {
    try (TcpProxy proxy = SlowPaths.proxyTo(url);
        LockClient client =
            SlowPaths.clientThrough(
                proxy, url, s -> s.withMode(JdbcLockMode.ROW).withTable("dlock_test_slow_rows"))) {
      LockOptions options = LockOptions.defaults().withRenewedLease(LEASE);
      String name = "slow-" + System.nanoTime();
      client.lock(name, options).tryAcquire().orElseThrow().release(); // schema, the lock's row
      proxy.delay(LEASE.toMillis() / 10);

      Lease lease = client.lock(name, options).acquire(millis(15_000));
      SlowPaths.keptPastItsLease(lease, LEASE);
      proxy.delay(0);
      assertThat(lease.release()).isTrue();
    }
  }
}
