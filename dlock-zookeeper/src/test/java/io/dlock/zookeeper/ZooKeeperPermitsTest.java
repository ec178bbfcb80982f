package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.Permit;
import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ZooKeeper permit store on one real server, through its SPI where the contract suite cannot
 * look: the nodes it leaves, which waiter a release signals, tokens across a reaped parent, the
 * head's transaction under a race of mixed counts, and repeated requests.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperPermitsTest {
  private static final Duration LEASE = Duration.ofSeconds(10);

  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-permits");
  private String root;
  private CuratorFramework admin;

  @BeforeEach
  void setUp() {
    root = zk.root();
    admin = zk.admin();
  }

  private static PermitStore store(ZooKeeperLockBackend backend) {
    return backend.permits().orElseThrow();
  }

  private LockClient client() {
    return client(zk.backend());
  }

  private LockClient client(ZooKeeperLockBackend backend) {
    return zk.client(backend, Duration.ofSeconds(5));
  }

  private static void expireSession(ZooKeeperLockBackend backend) throws Exception {
    backend.curator().getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
  }

  private static LockOwner owner() {
    return LockOwner.ofGrant(UUID.randomUUID().toString());
  }

  private static AcquireResult get(CompletableFuture<AcquireResult> call) {
    return call.orTimeout(10, TimeUnit.SECONDS).join();
  }

  private static long token(AcquireResult result) {
    assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    return ((AcquireResult.Granted) result).fencingToken();
  }

  private List<String> children(String semaphore) throws Exception {
    String parent = new PermitPaths(root).semaphorePath(semaphore);
    try {
      return admin.getChildren().forPath(parent);
    } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
      // Never made, or an empty container the server reaped (every 200 ms in tests).
      return List.of();
    }
  }

  @Test
  void aRepeatedRequestReturnsTheSameGrantAndAddsNothing() throws Exception {
    PermitStore store = store(zk.backend());
    LockOwner owner = owner();
    long token = token(get(store.tryAcquire("repeat", 2, 1, owner, LEASE)));
    assertThat(token(get(store.tryAcquire("repeat", 2, 1, owner, LEASE)))).isEqualTo(token);
    assertThat(store.holders("repeat").join())
        .singleElement()
        .satisfies(
            h -> {
              assertThat(h.fencingToken()).isEqualTo(token);
              assertThat(h.count()).isEqualTo(1);
              assertThat(h.leaseRemaining()).as("a session lease").isNull();
              assertThat(h.heldSince()).isNotNull();
            });
    assertThat(children("repeat")).as("one holder node, no waiter left").hasSize(1);

    assertThat(store.release("repeat", owner(), token).join()).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(store.release("repeat", owner, token + 1).join()).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(store.holders("repeat").join()).hasSize(1);
    assertThat(store.release("repeat", owner, token).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(store.release("repeat", owner, token).join()).isEqualTo(ReleaseResult.NOT_HELD);
  }

  @Test
  void aSingleAttemptWithoutRoomLeavesNoWaiterNode() throws Exception {
    LockClient client = client();
    var semaphore = client.semaphore("single", 1, LockOptions.defaults());
    Permit held = semaphore.tryAcquire().orElseThrow();
    for (int i = 0; i < 3; i++) {
      assertThat(semaphore.tryAcquire()).isEmpty();
    }
    await()
        .atMost(millis(5_000))
        .untilAsserted(
            () -> assertThat(children("single")).hasSize(1).allMatch(c -> c.startsWith("h-")));
    held.release();
  }

  /**
   * The client's next request after a refused attempt already finds the attempt's waiter node gone:
   * a later attempt of the same client (another owner) must not queue behind it, or strict fairness
   * refuses it though its count fits (CI27: tryAcquire(1) refused after a refused tryAcquire(2)).
   * The listing below is sent through the same session right after the refusal, so it is answered
   * after every request the refusal sent before it returned.
   */
  @Test
  void aRefusedAttemptsWaiterIsGoneBeforeTheClientsNextRequest() throws Exception {
    ZooKeeperLockBackend backend = zk.backend();
    LockClient client = client(backend);
    var semaphore = client.semaphore("refused", 3, LockOptions.defaults());
    Permit two = semaphore.tryAcquire(2).orElseThrow();
    String path = new PermitPaths(root).semaphorePath("refused");
    for (int i = 0; i < 20; i++) {
      assertThat(semaphore.tryAcquire(2)).as("2 + 2 > 3").isEmpty();
      List<String> children = backend.curator().getChildren().forPath(path);
      assertThat(PermitPaths.queue(children)).as("waiters after refusal %d", i).isEmpty();
    }
    Permit one = semaphore.tryAcquire(1).orElseThrow();
    one.release();
    two.release();
  }

  @Test
  void aReleaseSignalsTheHeadWaiterOnlyAndTheNextOnceTheHeadIsGranted() throws Exception {
    PermitStore store = store(zk.backend());
    List<String> signalled = new CopyOnWriteArrayList<>();
    store.watchReleases("turns", signalled::add).join();
    LockOwner holder = owner();
    LockOwner first = owner();
    LockOwner second = owner();
    long token = token(get(store.tryAcquire("turns", 1, 1, holder, LEASE)));
    assertThat(get(store.tryAcquire("turns", 1, 1, first, LEASE)))
        .isEqualTo(new AcquireResult.Held(null));
    assertThat(get(store.tryAcquire("turns", 1, 1, second, LEASE)))
        .isEqualTo(new AcquireResult.Held(null));

    store.release("turns", holder, token).join();
    await().atMost(millis(5_000)).until(() -> signalled.contains(first.key()));
    long firstToken = token(get(store.tryAcquire("turns", 1, 1, first, LEASE)));
    assertThat(firstToken).isGreaterThan(token);
    // The second waiter's predecessor (the first's waiter node) went with the grant: its turn to
    // look, though the permit is taken, so it waits again, now on the holder.
    await().atMost(millis(5_000)).until(() -> signalled.contains(second.key()));
    assertThat(signalled).containsExactly(first.key(), second.key());
    assertThat(get(store.tryAcquire("turns", 1, 1, second, LEASE)))
        .isEqualTo(new AcquireResult.Held(null));

    store.release("turns", first, firstToken).join();
    assertThat(token(get(store.tryAcquire("turns", 1, 1, second, LEASE))))
        .isGreaterThan(firstToken);
    store.unwatchReleases("turns");
    store.release("turns", second, store.holders("turns").join().get(0).fencingToken()).join();
  }

  @Test
  void tokensKeepIncreasingAfterTheSemaphoresNodesAreGone() throws Exception {
    PermitStore store = store(zk.backend());
    LockOwner owner = owner();
    long before = token(get(store.tryAcquire("reaped", 1, 1, owner, LEASE)));
    store.release("reaped", owner, before).join();
    String parent = new PermitPaths(root).semaphorePath("reaped");
    await().atMost(millis(10_000)).until(() -> admin.checkExists().forPath(parent) == null);
    LockOwner next = owner();
    long after = token(get(store.tryAcquire("reaped", 1, 1, next, LEASE)));
    assertThat(after).isGreaterThan(before);
    store.release("reaped", next, after).join();
  }

  @Test
  void renewalExtendsLiveGrantsAndReportsBrokenOnes() {
    PermitStore store = store(zk.backend());
    LockOwner kept = owner();
    LockOwner broken = owner();
    long keptToken = token(get(store.tryAcquire("renew", 2, 1, kept, LEASE)));
    long brokenToken = token(get(store.tryAcquire("renew", 2, 1, broken, LEASE)));
    assertThat(store.forceRelease("renew", brokenToken).join())
        .map(PermitInfo::fencingToken)
        .contains(brokenToken);
    HeldLease keptLease = new HeldLease("renew", kept, keptToken, LEASE);
    HeldLease brokenLease = new HeldLease("renew", broken, brokenToken, LEASE);
    HeldLease wrongToken = new HeldLease("renew", kept, keptToken + 1, LEASE);
    Set<HeldLease> gone = store.renew(List.of(keptLease, brokenLease, wrongToken)).join();
    assertThat(gone).containsExactlyInAnyOrder(brokenLease, wrongToken);
    assertThat(store.release("renew", broken, brokenToken).join())
        .isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(store.release("renew", kept, keptToken).join()).isEqualTo(ReleaseResult.RELEASED);
  }

  @Test
  void aLeaseNeitherReleasedNorRenewedEndsAndItsNodeGoes() throws Exception {
    PermitStore store = store(zk.backend());
    long token = token(get(store.tryAcquire("ends", 1, 1, owner(), Duration.ofMillis(300))));
    await().atMost(millis(5_000)).until(() -> children("ends").isEmpty());
    LockOwner next = owner();
    assertThat(token(get(store.tryAcquire("ends", 1, 1, next, LEASE)))).isGreaterThan(token);
    store.release("ends", next, store.holders("ends").join().get(0).fencingToken()).join();
  }

  @Test
  void theHeadKeepsLaterWaitersWaitingUntilItsCountFits() {
    PermitStore store = store(zk.backend());
    LockOwner holder = owner();
    LockOwner big = owner();
    LockOwner small = owner();
    long held = token(get(store.tryAcquire("fair", 2, 1, holder, LEASE)));
    assertThat(get(store.tryAcquire("fair", 2, 2, big, LEASE)))
        .isInstanceOf(AcquireResult.Held.class);
    assertThat(get(store.tryAcquire("fair", 2, 1, small, LEASE)))
        .as("one permit is free, but the head waiting for two comes first")
        .isInstanceOf(AcquireResult.Held.class);
    store.release("fair", holder, held).join();
    long bigToken = token(get(store.tryAcquire("fair", 2, 2, big, LEASE)));
    assertThat(get(store.tryAcquire("fair", 2, 1, small, LEASE)))
        .isInstanceOf(AcquireResult.Held.class);
    store.abandon("fair", small).join();
    store.release("fair", big, bigToken).join();
  }

  /** Two clients, mixed counts: the server never shows more permits held than the bound. */
  @Test
  void racingHeadsOfMixedCountsNeverHoldMoreThanTheBound() throws Exception {
    int permits = 3;
    List<LockClient> two = List.of(client(), client());
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger mostSeen = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(7);
    try {
      Future<?> sampler =
          threads.submit(
              () -> {
                while (running.get()) {
                  int held = 0;
                  for (String child : children("race")) {
                    PermitPaths.Holder holder = PermitPaths.holder(child);
                    held += holder == null ? 0 : holder.count();
                  }
                  mostSeen.accumulateAndGet(held, Math::max);
                }
                return null;
              });
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        var semaphore = two.get(t % 2).semaphore("race", permits, LockOptions.defaults());
        int count = 1 + t % 2;
        workers.add(
            threads.submit(
                () -> {
                  for (int i = 0; i < 5; i++) {
                    try (Permit permit = semaphore.acquire(count, millis(20_000))) {
                      assertThat(permit.count()).isEqualTo(count);
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : workers) {
        worker.get(40, TimeUnit.SECONDS);
      }
      running.set(false);
      sampler.get(5, TimeUnit.SECONDS);
    } finally {
      running.set(false);
      threads.shutdownNow();
    }
    assertThat(mostSeen.get()).isBetween(1, permits);
  }

  @Test
  void aLockNamedLikeTheSemaphoresRootTouchesNoSemaphore() throws Exception {
    LockClient client = client();
    Permit permit = client.semaphore("x", 1).tryAcquire().orElseThrow();
    try (var lease = client.lock(PermitPaths.SEMAPHORES).acquire(millis(5_000))) {
      assertThat(admin.checkExists().forPath(root + "/%2Esemaphores")).isNotNull();
      assertThat(client.semaphore("x", 1).holders()).hasSize(1);
    }
    permit.release();
  }

  @Test
  void anExpiredHoldersPermitsAreLostAndTheWaiterIsGranted() throws Exception {
    Duration session = Duration.ofSeconds(1);
    ZooKeeperLockBackend holderBackend = zk.backend(zk.settings().withSessionTimeout(session));
    LockClient holderClient = client(holderBackend);
    Permit held = holderClient.semaphore("expiry", 2).tryAcquire(2).orElseThrow();
    List<io.dlock.LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    CompletableFuture<Permit> waiting =
        client().semaphore("expiry", 2).acquireAsync(1, millis(30_000));
    await().atMost(millis(5_000)).until(() -> children("expiry").size() == 2);

    long silent = System.nanoTime();
    expireSession(holderBackend);
    Permit next = waiting.get(millis(30_000).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - silent))
        .isLessThan(session.plus(millis(3_000)));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    await().atMost(millis(5_000)).until(() -> !lost.isEmpty());
    assertThat(lost)
        .singleElement()
        .satisfies(
            e -> assertThat(e.reason()).isEqualTo(io.dlock.LeaseLostEvent.Reason.SESSION_LOST));
    assertThat(held.release()).isFalse();
    assertThat(next.release()).isTrue();
  }

  @Test
  void aWaiterWhoseSessionExpiresIsGrantedWhenThePermitComesBack() throws Exception {
    Duration session = Duration.ofSeconds(1);
    Permit held = client().semaphore("waiter-expiry", 1).tryAcquire().orElseThrow();
    ZooKeeperLockBackend waiterBackend = zk.backend(zk.settings().withSessionTimeout(session));
    LockClient waiterClient = client(waiterBackend);
    CompletableFuture<Permit> waiting =
        waiterClient.semaphore("waiter-expiry", 1).acquireAsync(1, millis(60_000));
    await().atMost(millis(5_000)).until(() -> children("waiter-expiry").size() == 2);

    // Its watch dies with the session: only the session change itself can wake it.
    expireSession(waiterBackend);
    long releasedAt = System.nanoTime();
    assertThat(held.release()).isTrue();
    Permit next = waiting.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - releasedAt))
        .isLessThan(session.plus(millis(3_000)));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(next.release()).isTrue();
  }
}
