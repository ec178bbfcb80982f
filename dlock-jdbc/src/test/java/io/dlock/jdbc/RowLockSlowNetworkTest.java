package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.testkit.net.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
  // Renewals every 667 ms: the pool validates a connection idle over 500 ms, a round trip more.
  private static final Duration LEASE = Duration.ofSeconds(2);

  @Test
  void postgresGrantsARowLockOverADelayedPathAndKeepsIt() throws Exception {
    grantsARowLockOverADelayedPathAndKeepsIt(TestDatabases.postgres());
  }

  @Test
  void mariaDbGrantsARowLockOverADelayedPathAndKeepsIt() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    grantsARowLockOverADelayedPathAndKeepsIt(TestDatabases.mariaDb().orElseThrow());
  }

  private static void grantsARowLockOverADelayedPathAndKeepsIt(String url) throws Exception {
    String host = url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$1");
    int port = Integer.parseInt(url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$2"));
    try (TcpProxy proxy = new TcpProxy(new InetSocketAddress(host, port));
        LockClient client =
            LockClients.create(
                JdbcLockBackend.connect(
                    JdbcLockSettings.of(url.replace(host + ":" + port, "127.0.0.1:" + proxy.port()))
                        .withMode(JdbcLockMode.ROW)
                        .withTable("dlock_test_slow_rows")
                        .withCreateSchema(true)),
                LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(10)))) {
      LockOptions options = LockOptions.defaults().withRenewedLease(LEASE);
      String name = "slow-" + System.nanoTime();
      client.lock(name, options).tryAcquire().orElseThrow().release(); // schema, the lock's row
      proxy.delay(LEASE.toMillis() / 10);

      Lease lease = client.lock(name, options).acquire(millis(15_000));
      List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
      lease.onLost(lost::add);
      // Past the lease the grant was first trusted for: only renewals that got through keep it.
      await()
          .during(LEASE.plus(LEASE.dividedBy(2)))
          .atMost(LEASE.multipliedBy(3))
          .untilAsserted(
              () -> {
                assertThat(lost).isEmpty();
                assertThat(lease.isValid()).isTrue();
              });
      proxy.delay(0);
      assertThat(lease.release()).isTrue();
    }
  }
}
