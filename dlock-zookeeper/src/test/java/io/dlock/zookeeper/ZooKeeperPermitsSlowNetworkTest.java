package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.Permit;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Permits over a slow network path (the torture suite's {@code delay}: a tenth of the lease each
 * way), which is no fault: a permit granted over it must not be reported lost.
 *
 * <p>Regression of the ZooKeeper semaphore soak's "spurious loss" under {@code delay}: the core
 * counts a grant's lease from when it asked, and an attempt that first queued (list, create, list)
 * and then granted spent four round trips before the grant was answered, so the first renewal, due
 * at once, was answered after the lease had run out (EXPIRED).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperPermitsSlowNetworkTest {
  private static final Duration LEASE = Duration.ofSeconds(1);

  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-permits-slow");

  private LockClient client(String connectString) {
    return zk.client(zk.backend(connectString), Duration.ofSeconds(5));
  }

  @Test
  void aPermitGrantedOverADelayedPathIsNotReportedLost() throws Exception {
    TcpProxy proxy = zk.proxy();
    LockOptions options = LockOptions.defaults().withRenewedLease(LEASE);
    // Another holder keeps the semaphore's node, so the slow attempt finds it and queues behind
    // nobody: the path of a worker that finds a permit free.
    Permit other =
        client(zk.connectString()).semaphore("slow", 3, options).tryAcquire().orElseThrow();
    LockClient slow = client("127.0.0.1:" + proxy.port());
    slow.semaphore("warm-up", 1).tryAcquire().orElseThrow().release(); // connected
    proxy.delay(LEASE.toMillis() / 10);

    Permit permit = slow.semaphore("slow", 3, options).acquire(millis(10_000));
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    permit.onLost(lost::add);
    // Past the lease the grant was first trusted for: only renewals that got through keep it.
    await()
        .during(LEASE.plus(LEASE.dividedBy(2)))
        .atMost(LEASE.multipliedBy(3))
        .untilAsserted(
            () -> {
              assertThat(lost).isEmpty();
              assertThat(permit.isValid()).isTrue();
            });

    proxy.delay(0);
    assertThat(permit.release()).isTrue();
    assertThat(other.release()).isTrue();
  }
}
