package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Session changes that race with an owner's own calls: a node whose create answer arrives as the
 * session is lost, and waiters of one owner id in several threads of one client.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZooKeeperSessionRaceTest {
  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-race");

  private ZooKeeperLockBackend backend() {
    return zk.backend();
  }

  private LockClient client(ZooKeeperLockBackend backend) {
    return zk.client(backend, Duration.ofSeconds(10));
  }

  private List<String> queue(String name) throws Exception {
    return zk.nodesUnder(new LockPaths(zk.root()).lockPath(name));
  }

  /**
   * The server's container reaper deletes a lock's parent node, empty after its last release,
   * between its creation and the queue node's: the create is answered NoNode, nothing was created,
   * and it is tried again (CI saw an owner id's acquisition fail with BackendUnavailableException).
   */
  @Test
  void aCreateAnsweredNoNodeAsTheReaperTookTheParentIsTriedAgain() {
    ZooKeeperLockBackend backend = backend();
    LockClient client = client(backend);
    AtomicInteger tries = new AtomicInteger();
    backend.beforeCreate(
        lockName -> {
          if (tries.incrementAndGet() == 1) {
            throw new org.apache.zookeeper.KeeperException.NoNodeException("/reaped (test)");
          }
        });
    Lease lease =
        client
            .lock("reaped-parent", io.dlock.LockOptions.defaults().withOwnerId("order-7"))
            .tryAcquire()
            .orElseThrow();
    assertThat(tries.get()).as("the create was tried again").isEqualTo(2);
    assertThat(lease.release()).isTrue();
  }

  /**
   * The race the review found: the create's answer (a node of the session now current) arrives, the
   * session is reported lost before the node is tracked, and the session loss finds nothing to
   * delete. The core, told of the loss, releases the grant; the release must find and delete the
   * node instead of answering "not held" and leaving it at the head of the queue for as long as the
   * session lives.
   */
  @Test
  void aNodeCreatedAsTheSessionIsLostIsDeletedInsteadOfBlockingTheLock() throws Exception {
    ZooKeeperLockBackend backend = backend();
    LockClient client = client(backend);
    LockClient other = client(backend());
    String name = "created-as-lost";
    CountDownLatch created = new CountDownLatch(1);
    CountDownLatch lossApplied = new CountDownLatch(1);
    AtomicBoolean first = new AtomicBoolean(true);
    backend.beforeTracking(
        path -> {
          if (first.compareAndSet(true, false)) {
            created.countDown();
            try {
              lossApplied.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });

    CompletableFuture<Optional<Lease>> attempt =
        CompletableFuture.supplyAsync(() -> client.lock(name).tryAcquire());
    assertThat(created.await(millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
        .as("the create was answered")
        .isTrue();
    assertThat(queue(name)).hasSize(1);
    // Curator reports the loss (as after a create it retried in the new session: the node belongs
    // to the session that is current now) and the connection back, while the answer is in hand.
    backend.onConnectionState(backend.curator(), ConnectionState.LOST);
    backend.onConnectionState(backend.curator(), ConnectionState.RECONNECTED);
    lossApplied.countDown();

    assertThatThrownBy(() -> attempt.get(millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(BackendUnavailableException.class);
    await()
        .atMost(millis(5_000))
        .untilAsserted(() -> assertThat(queue(name)).as("nodes left in the queue").isEmpty());
    Lease next = other.lock(name).tryAcquire().orElseThrow();
    assertThat(next.release()).isTrue();
  }

  /**
   * Two threads of one client wait with the same owner id; the first is granted the lock and the
   * second goes on waiting. The session then ends: the second thread's watch dies with it, so it
   * must be woken by the session change, although an acquisition of its owner id (the first
   * thread's) finished.
   */
  @Test
  void aSecondThreadOfAnOwnerIdIsWokenByTheSessionChangeAfterTheFirstWasGranted() throws Exception {
    TcpProxy proxy = zk.proxy();
    ZooKeeperLockBackend backend = zk.backend(proxy.address());
    LockClient client = client(backend);
    LockClient holderClient = client(backend());
    String name = "owner-id-threads";
    LockOptions shared = LockOptions.defaults().withOwnerId("shared-" + UUID.randomUUID());
    Lease held = holderClient.lock(name).tryAcquire().orElseThrow();
    Duration wait = millis(60_000);

    Waiting first = new Waiting(() -> client.lock(name, shared).acquire(wait));
    await().atMost(millis(10_000)).until(first::parked);
    Waiting second = new Waiting(() -> client.lock(name, shared).acquire(wait));
    await().atMost(millis(10_000)).until(second::parked);
    assertThat(held.release()).isTrue();
    // The release signal wakes one waiting thread of the owner id; the other goes on waiting.
    await().atMost(millis(10_000)).until(() -> first.lease.isDone() || second.lease.isDone());
    Waiting granted = first.lease.isDone() ? first : second;
    Waiting still = granted == first ? second : first;
    Lease grant = granted.lease.get();
    await().atMost(millis(10_000)).until(still::parked);

    // Cut off, the client's session ends on the server (its node and the waiter's watch go).
    proxy.refuse();
    ZooKeeperTestServers.expireSessionOnServer(
        backend.curator().getZookeeperClient().getZooKeeper(), zk.connectString());
    long backAt = System.nanoTime();
    proxy.allow();
    await().atMost(millis(10_000)).until(() -> !grant.isValid());
    assertThat(grant.release()).as("the lost grant's release reports the loss").isFalse();

    Lease next = still.lease.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - backAt))
        .as("granted once the new session is up, well within its wait of %s", wait)
        .isLessThan(millis(8_000));
    assertThat(next.isValid()).isTrue();
    assertThat(next.fencingToken()).isGreaterThan(grant.fencingToken());
    assertThat(holderClient.lock(name).tryAcquire()).isEmpty();
    assertThat(next.release()).isTrue();
  }

  /** An acquisition on a thread of its own, so the test can tell when it waits for a signal. */
  private static final class Waiting {
    final CompletableFuture<Lease> lease = new CompletableFuture<>();
    final Thread thread;

    Waiting(Supplier<Lease> acquire) {
      thread =
          new Thread(
              () -> {
                try {
                  lease.complete(acquire.get());
                } catch (RuntimeException e) {
                  lease.completeExceptionally(e);
                }
              },
              "waiter");
      thread.setDaemon(true);
      thread.start();
    }

    /** Parked in the core's queue of waiters, waiting for a release signal. */
    boolean parked() {
      Object blocker = LockSupport.getBlocker(thread);
      return !lease.isDone()
          && blocker != null
          && blocker.getClass().getName().endsWith("ReleaseWaiters$Waiter");
    }
  }
}
