package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.testkit.ForwardingLockBackend;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client whose connection is not there yet, or is being re-established, is connecting, not
 * unreachable: its calls wait for the connection within the caller's bound. Each client under test
 * reaches the server through a {@link TcpProxy} the test cuts and restores.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZooKeeperConnectionChangeTest {
  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-connecting");

  private String root;
  private CuratorFramework admin;

  @BeforeEach
  void setUp() {
    root = zk.root();
    admin = zk.admin();
  }

  private TcpProxy proxy(boolean down) {
    TcpProxy proxy = zk.proxy();
    if (down) {
      proxy.refuse();
    }
    return proxy;
  }

  private LockClient directClient() {
    return zk.client(Duration.ofSeconds(5));
  }

  /**
   * A backend that counts the acquisitions it was asked for, so the test knows one is under way.
   */
  private static final class Observed extends ForwardingLockBackend {
    final CountDownLatch asked = new CountDownLatch(1);

    Observed(ZooKeeperLockBackend delegate) {
      super(delegate);
    }

    @Override
    public CompletableFuture<AcquireResult> tryAcquire(
        String lockName, LockOwner owner, Duration lease) {
      CompletableFuture<AcquireResult> answer = super.tryAcquire(lockName, owner, lease);
      asked.countDown();
      return answer;
    }
  }

  @Test
  void anAcquireOnAJustStartedCuratorClientWaitsForItsConnection() throws Exception {
    TcpProxy proxy = proxy(true);
    CuratorFramework curator =
        zk.closeAtEnd(
            CuratorFrameworkFactory.newClient(
                proxy.address(), 4_000, 15_000, new RetryOneTime(100)));
    curator.start();
    Observed backend = new Observed(ZooKeeperLockBackend.using(curator, root));
    LockClient client = zk.client(backend, Duration.ofSeconds(10));
    String name = "first-call";

    CompletableFuture<Lease> acquiring = client.lock(name).acquireAsync(millis(20_000));
    assertThat(backend.asked.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(curator.getZookeeperClient().isConnected())
        .as("the attempt was made before any connection")
        .isFalse();
    proxy.allow();

    Lease lease = acquiring.get(millis(20_000).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(lease.isValid()).isTrue();
    assertThat(directClient().lock(name).tryAcquire()).isEmpty();
    assertThat(lease.release()).isTrue();
  }

  @Test
  void aJustStartedCuratorClientThatNeverConnectsFailsWithinTheCallersBound() throws Exception {
    TcpProxy proxy = proxy(true);
    CuratorFramework curator =
        zk.closeAtEnd(
            CuratorFrameworkFactory.newClient(
                proxy.address(), 4_000, 15_000, new RetryOneTime(100)));
    curator.start();
    LockClient client =
        zk.closeAtEnd(
            ZooKeeperLocks.newClient(
                curator,
                root,
                LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(1))));

    long start = System.nanoTime();
    assertThatThrownBy(() -> client.lock("never").acquire(Duration.ofSeconds(3)))
        .isInstanceOf(BackendUnavailableException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(millis(3000 + 1000));
  }

  @Test
  void aReleaseOfALeaseLostWithItsSessionWhileReconnectingReportsTheLoss() throws Exception {
    TcpProxy proxy = proxy(false);
    ZooKeeperLockBackend backend =
        zk.backend(zk.settings(proxy.address()).withSessionTimeout(Duration.ofSeconds(20)));
    LockClient client = zk.client(backend, Duration.ofSeconds(10));
    String name = "lost-while-away";
    Lease held =
        client
            .lock(name, LockOptions.defaults().withRenewedLease(Duration.ofSeconds(30)))
            .tryAcquire()
            .orElseThrow();

    // Partitioned, and its session ends on the server meanwhile: the node is gone, and the client
    // can only learn it once it reaches the server again.
    proxy.refuse();
    await().atMost(millis(10_000)).until(() -> held.state() == LeaseState.UNCERTAIN);
    ZooKeeperTestServers.expireSessionOnServer(
        backend.curator().getZookeeperClient().getZooKeeper(), zk.connectString());
    assertThat(ZooKeeperTestServers.nodesUnder(admin, root + "/" + name)).isEmpty();

    CompletableFuture<Boolean> releasing = CompletableFuture.supplyAsync(held::release);
    proxy.allow();
    assertThat(releasing.get(millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
        .as("the lease was lost with its session")
        .isFalse();
    // The release itself is the report: the core ends the grant as the release starts, so the
    // session's loss, applied while the release waited, finds no listener left to tell.
    assertThat(held.isValid()).isFalse();

    // The new session is a working one: a grant in it reads valid, not uncertain.
    Lease again = client.lock(name).acquire(millis(10_000));
    assertThat(again.state()).isEqualTo(LeaseState.VALID);
    assertThat(again.release()).isTrue();
  }

  @Test
  void aPartitionedWaiterWhoseSessionExpiredIsGrantedOnceItIsBack() throws Exception {
    TcpProxy proxy = proxy(false);
    ZooKeeperLockBackend waiterBackend = zk.backend(proxy.address());
    LockClient waiterClient = zk.client(waiterBackend, Duration.ofSeconds(10));
    LockClient holderClient = directClient();
    String name = "waiter-partitioned";
    Lease held = holderClient.lock(name).tryAcquire().orElseThrow();
    Duration wait = millis(60_000);
    CompletableFuture<Lease> waiting = waiterClient.lock(name).acquireAsync(wait);
    await()
        .atMost(millis(5_000))
        .until(() -> ZooKeeperTestServers.nodesUnder(admin, root + "/" + name).size() == 2);

    // Cut off, the waiter's session ends on the server (its node and its watch with it), and the
    // holder releases meanwhile: no watch is left to tell the waiter.
    proxy.refuse();
    ZooKeeperTestServers.expireSessionOnServer(
        waiterBackend.curator().getZookeeperClient().getZooKeeper(), zk.connectString());
    assertThat(held.release()).isTrue();
    assertThat(ZooKeeperTestServers.nodesUnder(admin, root + "/" + name)).isEmpty();

    long backAt = System.nanoTime();
    proxy.allow();
    Lease next = waiting.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - backAt))
        .as("granted once back, well within its wait of %s", wait)
        .isLessThan(millis(5_000));
    assertThat(next.isValid()).isTrue();
    assertThat(holderClient.lock(name).tryAcquire()).isEmpty();
    assertThat(next.release()).isTrue();
  }
}
