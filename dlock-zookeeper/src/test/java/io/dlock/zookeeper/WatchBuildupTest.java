package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.Permit;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Polling a full semaphore or a held lock leaves no watcher behind in the polling client: the
 * client keeps every watcher object it registered until its node changes, so an attempt that ends
 * (granted or given up) must take its watches back, or the table grows by one entry per watched
 * node per attempt for as long as the holders hold.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WatchBuildupTest {
  private static final int POLLS = 25;
  private static final Duration LEASE = Duration.ofSeconds(10);
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-watches");

  /**
   * The data watchers the client's ZooKeeper handle keeps, counted per watcher and node. Read from
   * its watch manager: {@code ZooKeeper#getDataWatches} lists only the nodes, which a buildup of
   * watchers on the same nodes does not change.
   */
  @SuppressWarnings("unchecked")
  private static int dataWatchers(ZooKeeperLockBackend backend) throws Exception {
    ZooKeeper zk = backend.curator().getZookeeperClient().getZooKeeper();
    Method manager = ZooKeeper.class.getDeclaredMethod("getWatchManager");
    manager.setAccessible(true);
    Object watchManager = manager.invoke(zk);
    Method data = watchManager.getClass().getDeclaredMethod("getDataWatches");
    data.setAccessible(true);
    Map<String, Set<Watcher>> watches = (Map<String, Set<Watcher>>) data.invoke(watchManager);
    synchronized (watches) { // the manager's own guard of the map
      return watches.values().stream().mapToInt(Set::size).sum();
    }
  }

  @Test
  void pollingAFullSemaphoreLeavesNoWatcherBehind() throws Exception {
    LockClient holder = zk.client(TIMEOUT);
    Permit first = holder.semaphore("full", 2).tryAcquire().orElseThrow();
    Permit second = holder.semaphore("full", 2).tryAcquire().orElseThrow();
    ZooKeeperLockBackend polling = zk.backend();
    LockClient poller = zk.client(polling, TIMEOUT);
    var semaphore = poller.semaphore("full", 2);
    // The count sees the watches an attempt sets: the head watches every holder when it does not
    // fit, and keeps them while it waits.
    LockOwner waiter = LockOwner.ofGrant(UUID.randomUUID().toString());
    PermitStore store = polling.permits().orElseThrow();
    assertThat(store.tryAcquire("full", 2, 1, waiter, LEASE).get(10, TimeUnit.SECONDS))
        .isEqualTo(new AcquireResult.Held(null));
    assertThat(dataWatchers(polling)).isEqualTo(2);
    store.abandon("full", waiter).get(10, TimeUnit.SECONDS);

    for (int i = 0; i < POLLS; i++) {
      assertThat(semaphore.tryAcquire()).isEmpty();
    }
    // Without taking them back, each attempt left one watcher per holder.
    await().atMost(millis(5_000)).untilAsserted(() -> assertThat(dataWatchers(polling)).isZero());

    assertThat(first.release()).isTrue();
    assertThat(second.release()).isTrue();
  }

  @Test
  void pollingAHeldLockLeavesNoWatcherBehind() throws Exception {
    LockClient holder = zk.client(TIMEOUT);
    Lease held = holder.lock("held").tryAcquire().orElseThrow();
    ZooKeeperLockBackend polling = zk.backend();
    LockClient poller = zk.client(polling, TIMEOUT);
    // The count sees the watch an attempt sets on its predecessor and keeps while it waits.
    LockOwner waiter = LockOwner.ofGrant(UUID.randomUUID().toString());
    assertThat(polling.tryAcquire("held", waiter, LEASE).get(10, TimeUnit.SECONDS))
        .isEqualTo(new AcquireResult.Held(null));
    assertThat(dataWatchers(polling)).isEqualTo(1);
    polling.abandon("held", waiter).get(10, TimeUnit.SECONDS);

    for (int i = 0; i < POLLS; i++) {
      assertThat(poller.lock("held").tryAcquire()).isEmpty();
    }
    await().atMost(millis(5_000)).untilAsserted(() -> assertThat(dataWatchers(polling)).isZero());

    assertThat(held.release()).isTrue();
  }
}
