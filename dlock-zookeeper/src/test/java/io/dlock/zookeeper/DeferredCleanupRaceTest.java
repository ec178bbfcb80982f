package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

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

  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-deferred");
  private TcpProxy proxy;
  private CuratorFramework admin;

  @BeforeEach
  void setUp() {
    admin = zk.admin();
    proxy = zk.proxy();
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
    ZooKeeperLockBackend waiterBackend = zk.backend(proxy.address());
    PermitStore holders = zk.backend().permits().orElseThrow();
    PermitStore waiters = waiterBackend.permits().orElseThrow();
    LockOwner holder = owner();
    LockOwner waiter = owner();
    String parent = new PermitPaths(zk.root()).semaphorePath("s");
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
    ZooKeeperLockBackend waiterBackend = zk.backend(proxy.address());
    ZooKeeperLockBackend holderBackend = zk.backend();
    LockOwner holder = owner();
    LockOwner waiter = owner();
    String lock = zk.root() + "/l";
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
