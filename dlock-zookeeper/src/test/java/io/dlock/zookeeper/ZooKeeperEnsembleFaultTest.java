package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Faults of a 3-node ensemble: the leader dies while a lock is held and clients wait. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZooKeeperEnsembleFaultTest {

  @Test
  void leaderDiesWhileHeldAndWaitedFor_noTwoHoldersAndAcquisitionsResume() throws Exception {
    TestingCluster ensemble = ZooKeeperTestServers.cluster();
    String root = "/dlock-leader-kill-" + UUID.randomUUID().toString().substring(0, 8);
    String name = "leader-kill";
    // Short renewed leases: a release that fails during the election leaves the lock to its lease.
    LockOptions options = LockOptions.defaults().withRenewedLease(Duration.ofSeconds(3));
    List<LockClient> clients = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      clients.add(
          ZooKeeperLocks.newClient(
              ZooKeeperTestServers.settings(ensemble.getConnectString(), root),
              LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(3))));
    }
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger grants = new AtomicInteger();
    List<Long> tokensInGrantOrder = new CopyOnWriteArrayList<>();
    List<Throwable> unexpected = new CopyOnWriteArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch heldAtKill = new CountDownLatch(1);
    AtomicBoolean killRequested = new AtomicBoolean();
    List<Thread> workers = new ArrayList<>();
    InstanceSpec killed = null;
    try {
      for (int t = 0; t < 6; t++) {
        DistributedLock lock = clients.get(t % clients.size()).lock(name, options);
        Thread worker =
            new Thread(
                () -> {
                  while (!stop.get()) {
                    try (Lease lease = lock.acquire(millis(20_000))) {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      tokensInGrantOrder.add(lease.fencingToken());
                      grants.incrementAndGet();
                      if (killRequested.get() && heldAtKill.getCount() > 0) {
                        heldAtKill.countDown();
                        // Simulated work: keep holding while the leader is killed.
                        Thread.sleep(500);
                      } else {
                        Thread.sleep(2); // simulated work inside the critical section
                      }
                      inside.decrementAndGet();
                    } catch (LockTimeoutException | BackendUnavailableException e) {
                      // expected while the ensemble elects a new leader
                    } catch (LockException e) {
                      // a lease lost during the election: the next attempt starts afresh
                    } catch (InterruptedException e) {
                      return;
                    } catch (RuntimeException | Error e) {
                      unexpected.add(e);
                    }
                  }
                },
                "leader-kill-worker-" + t);
        workers.add(worker);
        worker.start();
      }
      await().atMost(millis(20_000)).until(() -> grants.get() >= 30);

      killRequested.set(true);
      assertThat(heldAtKill.await(millis(20_000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
      killed = ZooKeeperTestServers.leader(ensemble);
      int grantsAtKill = grants.get();
      ensemble.killServer(killed);

      // Acquisitions resume on the two survivors.
      await().atMost(millis(60_000)).until(() -> grants.get() >= grantsAtKill + 30);
    } finally {
      stop.set(true);
      for (Thread worker : workers) {
        worker.join(TimeUnit.SECONDS.toMillis(60));
      }
      for (LockClient client : clients) {
        client.close();
      }
      if (killed != null) {
        ensemble.restartServer(killed);
      }
    }
    assertThat(unexpected).isEmpty();
    assertThat(overlaps).as("moments with two holders").hasValue(0);
    for (int i = 1; i < tokensInGrantOrder.size(); i++) {
      assertThat(tokensInGrantOrder.get(i))
          .as("fencing token of grant %d", i)
          .isGreaterThan(tokensInGrantOrder.get(i - 1));
    }
    try (CuratorFramework admin = ZooKeeperTestServers.admin(ensemble.getConnectString())) {
      await()
          .atMost(millis(20_000))
          .untilAsserted(() -> assertThat(ZooKeeperTestServers.nodesUnder(admin, root)).isEmpty());
    }
  }
}
