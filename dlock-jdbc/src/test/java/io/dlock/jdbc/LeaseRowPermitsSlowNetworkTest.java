package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.Permit;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Permits over a slow network path (the torture suite's {@code delay}: a tenth of the lease each
 * way), which is no fault: a permit must be granted over it, and not be reported lost.
 *
 * <p>Regression of the JDBC semaphore soaks under {@code delay} (2026-12-03): an acquisition is one
 * transaction of six round trips (eight on MariaDB), and counted from the call, a 2 s lease was
 * spent before the grant was answered: every grant "arrived after its lease had run out" and the
 * semaphore stayed free while workers waited. The lease is now counted from the statement that sets
 * it on the server ({@code AcquireResult.Granted#leaseStartedAfterNanos}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseRowPermitsSlowNetworkTest {
  private static final Duration LEASE = Duration.ofSeconds(1);

  @Test
  void postgresGrantsAPermitOverADelayedPathAndKeepsIt() throws Exception {
    grantsAPermitOverADelayedPathAndKeepsIt(TestDatabases.postgres());
  }

  @Test
  void mariaDbGrantsAPermitOverADelayedPathAndKeepsIt() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    grantsAPermitOverADelayedPathAndKeepsIt(TestDatabases.mariaDb().orElseThrow());
  }

  private static void grantsAPermitOverADelayedPathAndKeepsIt(String url) throws Exception {
    try (TcpProxy proxy = SlowPaths.proxyTo(url);
        LockClient client =
            SlowPaths.clientThrough(proxy, url, s -> s.withTable("dlock_test_slow_permits"))) {
      LockOptions options = LockOptions.defaults().withRenewedLease(LEASE);
      String name = "slow-" + System.nanoTime();
      client.semaphore(name, 2, options).tryAcquire().orElseThrow().release(); // schema, counter
      proxy.delay(LEASE.toMillis() / 10);

      Permit permit = client.semaphore(name, 2, options).acquire(millis(15_000));
      SlowPaths.keptPastItsLease(permit, LEASE);
      proxy.delay(0);
      assertThat(permit.release()).isTrue();
    }
  }
}
