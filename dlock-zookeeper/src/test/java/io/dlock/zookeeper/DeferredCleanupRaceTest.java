package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import io.dlock.testkit.net.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The clean-up of an abandoned wait that failed for want of a connection is retried even when the
 * reconnection was handled between the failure and the keeping of the clean-up for the reconnection
 * (see {@link DeferredCleanups}). Otherwise the waiter node stays as long as the session, and at
 * the head of its queue it blocks every later waiter. The waiter's client reaches the server
 * through a {@link TcpProxy}; a hook has the reconnection handled inside that window.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeferredCleanupRaceTest {
  private static final Duration LEASE = Duration.ofSeconds(10);

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private TestingServer server;
  private String root;
  private CuratorFramework admin;
  private TcpProxy proxy;

  @BeforeEach
  void setUp() {
    server = ZooKeeperTestServers.single();
    root = "/dlock-deferred-" + UUID.randomUUID().toString().substring(0, 8);
    admin = ZooKeeperTestServers.admin(server.getConnectString());
    proxy = new TcpProxy(new InetSocketAddress("127.0.0.1", server.getPort()));
    closeables.add(proxy);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    try {
      await()
          .atMost(millis(15_000))
          .untilAsserted(() -> assertThat(ZooKeeperTestServers.nodesUnder(admin, root)).isEmpty());
    } finally {
      admin.close();
    }
  }

  private ZooKeeperLockBackend backend(String connectString) {
    ZooKeeperLockBackend backend =
        ZooKeeperLockBackend.connect(ZooKeeperTestServers.settings(connectString, root));
    closeables.add(backend);
    return backend;
  }

  private static LockOwner owner() {
    return LockOwner.ofGrant(UUID.randomUUID().toString());
  }

  /**
   * Cuts the waiter's connection, and has the failed clean-up that follows wait, before it is kept,
   * until the reconnection was handled (the generation moved: the kept clean-ups were taken).
   */
  private void reconnectBeforeTheFailedCleanUpIsKept(
      ZooKeeperLockBackend waiter, DeferredCleanups deferred) {
    long before = deferred.generation();
    AtomicBoolean once = new AtomicBoolean();
    deferred.beforeKeep(
        key -> {
          if (once.compareAndSet(false, true)) {
            proxy.allow();
            await().atMost(millis(10_000)).until(() -> deferred.generation() > before);
          }
        });
    proxy.refuse();
    await().atMost(millis(5_000)).until(() -> !waiter.curator().getZookeeperClient().isConnected());
  }

  @Test
  void anAbandonedPermitWaitIsCleanedUpThoughTheReconnectionCameBeforeItWasKept() throws Exception {
    ZooKeeperLockBackend waiterBackend = backend(proxy.address());
    PermitStore holders = backend(server.getConnectString()).permits().orElseThrow();
    PermitStore waiters = waiterBackend.permits().orElseThrow();
    LockOwner holder = owner();
    LockOwner waiter = owner();
    String parent = new PermitPaths(root).semaphorePath("s");
    AcquireResult held = holders.tryAcquire("s", 1, 1, holder, LEASE).get(10, TimeUnit.SECONDS);
    long token = ((AcquireResult.Granted) held).fencingToken();
    assertThat(waiters.tryAcquire("s", 1, 1, waiter, LEASE).get(10, TimeUnit.SECONDS))
        .isEqualTo(new AcquireResult.Held(null));
    assertThat(admin.getChildren().forPath(parent)).hasSize(2);

    DeferredCleanups deferred = ((ZooKeeperPermits) waiters).deferredLeaves();
    reconnectBeforeTheFailedCleanUpIsKept(waiterBackend, deferred);
    waiters.abandon("s", waiter).get(10, TimeUnit.SECONDS);

    // The waiter node heads the queue: left behind, no later waiter would ever be granted.
    await()
        .atMost(millis(5_000))
        .untilAsserted(
            () ->
                assertThat(admin.getChildren().forPath(parent))
                    .singleElement()
                    .satisfies(child -> assertThat(child).startsWith("h-")));
    assertThat(deferred.size()).isZero();
    assertThat(holders.release("s", holder, token).get(10, TimeUnit.SECONDS))
        .isEqualTo(ReleaseResult.RELEASED);
  }

  @Test
  void anAbandonedLockWaitIsCleanedUpThoughTheReconnectionCameBeforeItWasKept() throws Exception {
    ZooKeeperLockBackend waiterBackend = backend(proxy.address());
    ZooKeeperLockBackend holderBackend = backend(server.getConnectString());
    LockOwner holder = owner();
    LockOwner waiter = owner();
    String lock = root + "/l";
    AcquireResult held = holderBackend.tryAcquire("l", holder, LEASE).get(10, TimeUnit.SECONDS);
    long token = ((AcquireResult.Granted) held).fencingToken();
    assertThat(waiterBackend.tryAcquire("l", waiter, LEASE).get(10, TimeUnit.SECONDS))
        .isEqualTo(new AcquireResult.Held(null));
    assertThat(admin.getChildren().forPath(lock)).hasSize(2);

    DeferredCleanups deferred = waiterBackend.deferredAbandons();
    reconnectBeforeTheFailedCleanUpIsKept(waiterBackend, deferred);
    waiterBackend.abandon("l", waiter).get(10, TimeUnit.SECONDS);

    // Left behind, the waiter node would become the head once the holder releases.
    await().atMost(millis(5_000)).until(() -> admin.getChildren().forPath(lock).size() == 1);
    assertThat(deferred.size()).isZero();
    assertThat(holderBackend.release("l", holder, token).get(10, TimeUnit.SECONDS))
        .isEqualTo(ReleaseResult.RELEASED);
  }
}
