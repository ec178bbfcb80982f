package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults and load on one real ZooKeeper server: session expiry, a suspended connection, a herd of
 * waiters, and many cycles, each ending with no lock znode left behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZooKeeperFaultTest {
  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-fault");
  private String root;

  @BeforeEach
  void setUp() {
    root = zk.root();
  }

  private LockClient client(ZooKeeperLockBackend backend) {
    return zk.client(backend, Duration.ofSeconds(5));
  }

  private LockClient newClient() {
    return client(zk.backend());
  }

  @Test
  void expiredHolderSessionHandsTheLockToTheNextWaiterWithinTheSessionTimeout() throws Exception {
    Duration session = Duration.ofSeconds(2);
    ZooKeeperLockBackend holderBackend = zk.backend(zk.settings().withSessionTimeout(session));
    LockClient holderClient = client(holderBackend);
    LockClient waiterClient = newClient();
    String name = "expiry";
    Lease held = holderClient.lock(name).tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    CompletableFuture<Lease> waiting = waiterClient.lock(name).acquireAsync(millis(30_000));
    await().atMost(millis(5_000)).until(() -> zk.nodesUnder(root + "/" + name).size() == 2);

    // The holder goes silent: its client drops the session and stops heartbeating, and the
    // server expires the session (deleting its nodes) once the session timeout has passed.
    long silent = System.nanoTime();
    holderBackend
        .curator()
        .getZookeeperClient()
        .getZooKeeper()
        .getTestable()
        .injectSessionExpiration();

    Lease next = waiting.get(millis(30_000).toMillis(), TimeUnit.MILLISECONDS);
    Duration took = Duration.ofNanos(System.nanoTime() - silent);
    assertThat(took).isLessThan(session.plus(millis(2_000)));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    await().atMost(millis(5_000)).until(() -> !lost.isEmpty());
    assertThat(lost)
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.SESSION_LOST));
    assertThat(held.isValid()).isFalse();
    assertThat(held.state()).isEqualTo(LeaseState.LOST);
    assertThat(held.release()).isFalse();
    assertThat(next.release()).isTrue();
  }

  @Test
  void aWaiterWhoseSessionExpiresIsGrantedWhenTheHolderReleases() throws Exception {
    Duration session = Duration.ofSeconds(1);
    LockClient holderClient = newClient();
    ZooKeeperLockBackend waiterBackend = zk.backend(zk.settings().withSessionTimeout(session));
    LockClient waiterClient = client(waiterBackend);
    String name = "waiter-expiry";
    Lease held = holderClient.lock(name).tryAcquire().orElseThrow();
    Duration wait = millis(60_000);
    CompletableFuture<Lease> waiting = waiterClient.lock(name).acquireAsync(wait);
    await().atMost(millis(5_000)).until(() -> zk.nodesUnder(root + "/" + name).size() == 2);

    // The waiter's session expires (its client is told so, and the server drops the session
    // within its timeout): the watch on the holder's node dies with it, so the holder's release
    // below can reach the waiter only if the session change itself wakes it.
    waiterBackend
        .curator()
        .getZookeeperClient()
        .getZooKeeper()
        .getTestable()
        .injectSessionExpiration();
    long releasedAt = System.nanoTime();
    assertThat(held.release()).isTrue();

    // Queued again in its new session (behind its old node until the server expires it).
    Lease next = waiting.get(session.plus(millis(5_000)).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - releasedAt))
        .as("granted well within its wait of %s", wait)
        .isLessThan(session.plus(millis(3_000)));
    assertThat(next.isValid()).isTrue();
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(holderClient.lock(name).tryAcquire()).isEmpty();
    assertThat(next.release()).isTrue();
  }

  @Test
  void suspendedConnectionMakesTheLeaseUncertainUntilTheSameSessionIsBack() throws Exception {
    LockClient client = newClient();
    Lease held =
        client
            .lock("suspend", LockOptions.defaults().withRenewedLease(Duration.ofSeconds(20)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    zk.closeAdmin();
    zk.server().stop();
    try {
      await().atMost(millis(5_000)).until(() -> held.state() == LeaseState.UNCERTAIN);
      assertThat(held.isValid()).isFalse();
    } finally {
      zk.server().restart();
    }
    // Back within the 4 s session timeout: the same session, so the lease is valid again.
    await().atMost(millis(10_000)).until(() -> held.state() == LeaseState.VALID);
    assertThat(held.isValid()).isTrue();
    assertThat(lost).isEmpty();
    assertThat(held.release()).isTrue();
    zk.openAdmin();
  }

  @Test
  void oneReleaseWakesOneWaiterAmongAHundredNotAHerd() throws Exception {
    String name = "herd";
    LockClient holder = newClient();
    int clientCount = 10;
    int waitersPerClient = 10;
    int waiters = clientCount * waitersPerClient;
    List<LockClient> waitingClients = new ArrayList<>();
    List<ZooKeeperLockBackend> waitingBackends = new ArrayList<>();
    for (int i = 0; i < clientCount; i++) {
      ZooKeeperLockBackend backend = zk.backend();
      waitingBackends.add(backend);
      waitingClients.add(client(backend));
    }
    Lease held = holder.lock(name).tryAcquire().orElseThrow();

    AtomicInteger acquired = new AtomicInteger();
    CompletableFuture<Void> releaseFirst = new CompletableFuture<>();
    ExecutorService pool = Executors.newFixedThreadPool(waiters);
    List<Future<?>> futures = new ArrayList<>();
    try {
      for (int i = 0; i < waiters; i++) {
        DistributedLock lock = waitingClients.get(i % clientCount).lock(name);
        futures.add(
            pool.submit(
                () -> {
                  try (Lease lease = lock.acquire(millis(120_000))) {
                    if (acquired.incrementAndGet() == 1) {
                      // The first waiter keeps the lock until the single-release count is taken.
                      releaseFirst.get(60, TimeUnit.SECONDS);
                    }
                  }
                  return null;
                }));
      }
      // All 100 waiters are queued behind the holder, each watching its predecessor.
      await()
          .atMost(millis(30_000))
          .until(() -> zk.nodesUnder(root + "/" + name).size() == waiters + 1);
      long before = notifications(waitingBackends);

      held.release();
      await().atMost(millis(10_000)).until(() -> acquired.get() == 1);
      long afterOneRelease = notifications(waitingBackends);
      assertThat(afterOneRelease - before)
          .as("watch notifications across all clients caused by one release")
          .isBetween(1L, 2L);

      releaseFirst.complete(null);
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
      assertThat(acquired).hasValue(waiters);
      // 100 releases (the holder's and 99 waiters'): still at most 2 notifications each.
      assertThat(notifications(waitingBackends) - before).isLessThanOrEqualTo(2L * waiters);
    } finally {
      pool.shutdownNow();
    }
  }

  private static long notifications(List<ZooKeeperLockBackend> backends) {
    return backends.stream().mapToLong(ZooKeeperLockBackend::watchNotifications).sum();
  }

  @Test
  void tenThousandCyclesOverAHundredNamesLeaveNoLockNode() throws Exception {
    int names = 100;
    int cycles = 10_000;
    int threads = 4;
    List<LockClient> pair = List.of(newClient(), newClient());
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        LockClient client = pair.get(t % 2);
        futures.add(
            pool.submit(
                () -> {
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  while (done.getAndIncrement() < cycles) {
                    String name = "cycle-" + random.nextInt(names);
                    try (Lease lease = client.lock(name).acquire(millis(30_000))) {
                      lease.ensureValid();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(TestTiming.millis(150_000).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(done.get()).isGreaterThanOrEqualTo(cycles);
    for (LockClient client : pair) {
      assertThat(client.heldLeases()).isEmpty();
    }
    // No queue node is left right away; the parents go with the container sweep (AfterEach).
    await()
        .atMost(millis(10_000))
        .untilAsserted(
            () ->
                assertThat(zk.nodesUnder(root))
                    .noneMatch(path -> path.contains("/" + LockPaths.NODE_MARKER)));
  }
}
