package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One owner id shared by clients of different processes (each its own backend and session, as
 * dlock-torture's zookeeper-owner-id target runs them): joins, leaves and last releases of the one
 * node they share race with each other, and the node lives in its creator's session only.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZooKeeperSharedOwnerIdTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @RegisterExtension final ZooKeeperTestClients zk = new ZooKeeperTestClients("dlock-shared");
  private String lockName;
  private LockOwner owner;
  private CuratorFramework admin;

  @BeforeEach
  void setUp() {
    lockName = "order-" + UUID.randomUUID().toString().substring(0, 8);
    owner = LockOwner.ofOwnerId("chain-" + UUID.randomUUID());
    admin = zk.admin();
  }

  private ZooKeeperLockBackend backend() {
    return backend(zk.connectString());
  }

  private ZooKeeperLockBackend backend(String connectString) {
    return zk.backend(zk.settings(connectString).withOwnerIdsSharedAcrossClients(true));
  }

  private LockClient client(ZooKeeperLockBackend backend) {
    return zk.client(backend, Duration.ofSeconds(10));
  }

  private static <T> T get(CompletableFuture<T> future) throws Exception {
    return future.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
  }

  private static long granted(AcquireResult result) {
    assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    return ((AcquireResult.Granted) result).fencingToken();
  }

  /**
   * The torture's "tokens out of order" and "two grants of one owner id at once": a client joining
   * its owner id's hold reads the head node, the head's last hold is released (the node deleted)
   * before the join's version-checked write, and the write fails. The join must start over without
   * keeping anything of the deleted node: its own node then heads the queue, and the grant's token
   * is that node's, never the deleted one's (which the previous code handed out, so that a later
   * join of the same owner id, correctly given the live node's token, looked like a second grant).
   */
  @Test
  void aJoinWhoseHeadIsDeletedBeforeItsWriteNeverHandsOutTheDeletedNodesToken() throws Exception {
    ZooKeeperLockBackend creator = backend();
    ZooKeeperLockBackend partner = backend();
    long first = granted(get(creator.tryAcquire(lockName, owner, LEASE)));

    CountDownLatch read = new CountDownLatch(1);
    CountDownLatch deleted = new CountDownLatch(1);
    AtomicBoolean once = new AtomicBoolean(true);
    partner.beforeJoinWrite(
        path -> {
          if (once.compareAndSet(true, false)) {
            read.countDown();
            try {
              deleted.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });
    CompletableFuture<AcquireResult> joining = partner.tryAcquire(lockName, owner, LEASE);
    assertThat(read.await(millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
        .as("the partner read the head to join it")
        .isTrue();
    assertThat(get(creator.release(lockName, owner, first)))
        .as("the creator's last hold deletes the node")
        .isEqualTo(ReleaseResult.RELEASED);
    deleted.countDown();

    long second = granted(get(joining));
    assertThat(second)
        .as("the partner's grant is its own node's, made after the deleted one")
        .isGreaterThan(first);
    long head = admin.checkExists().forPath(headPath()).getCzxid();
    assertThat(second).as("the token of the node that heads the queue").isEqualTo(head);

    // The creator's next acquisition joins the partner's grant: the same grant, the same token.
    long joined = granted(get(creator.tryAcquire(lockName, owner, LEASE)));
    assertThat(joined).as("one grant of the owner id, one token").isEqualTo(second);
    assertThat(get(creator.release(lockName, owner, joined))).isEqualTo(ReleaseResult.STILL_HELD);
    assertThat(get(partner.release(lockName, owner, second))).isEqualTo(ReleaseResult.RELEASED);
  }

  /**
   * A waiter's node reaches the head of the queue and, before the waiter's own next attempt,
   * another client of the same owner id joins it (its hold is counted on that node). The waiter
   * then gives up: it must take back only its own hold (a version-checked decrement), not delete
   * the node under the partner's grant, which would let a stranger in while the partner holds.
   */
  @Test
  void aWaiterThatGivesUpKeepsTheHoldAPartnerJoinedOnItsNode() throws Exception {
    ZooKeeperLockBackend stranger = backend();
    ZooKeeperLockBackend waiter = backend();
    ZooKeeperLockBackend partner = backend();
    LockOwner strangerOwner = LockOwner.ofGrant(UUID.randomUUID().toString());
    long strangers = granted(get(stranger.tryAcquire(lockName, strangerOwner, LEASE)));
    assertThat(get(waiter.tryAcquire(lockName, owner, LEASE)))
        .isInstanceOf(AcquireResult.Held.class);
    assertThat(get(stranger.release(lockName, strangerOwner, strangers)))
        .isEqualTo(ReleaseResult.RELEASED);

    // The waiter's node heads the queue; its owner id's partner joins it.
    long partners = granted(get(partner.tryAcquire(lockName, owner, LEASE)));
    get(waiter.abandon(lockName, owner));
    await()
        .atMost(millis(5_000))
        .untilAsserted(
            () ->
                assertThat(new String(admin.getData().forPath(headPath()), "UTF-8"))
                    .as("the waiter's hold is taken back")
                    .startsWith("1|"));

    LockOwner third = LockOwner.ofGrant(UUID.randomUUID().toString());
    assertThat(get(stranger.tryAcquire(lockName, third, LEASE)))
        .as("the partner's grant still excludes everyone else")
        .isInstanceOf(AcquireResult.Held.class);
    assertThat(get(partner.release(lockName, owner, partners))).isEqualTo(ReleaseResult.RELEASED);
    long next = granted(get(stranger.tryAcquire(lockName, third, LEASE)));
    assertThat(next).isGreaterThan(partners);
    assertThat(get(stranger.release(lockName, third, next))).isEqualTo(ReleaseResult.RELEASED);
  }

  /**
   * The shared node lives in its creator's session. When that session ends (the creator cut off
   * past its session timeout), the partner must learn it from the node's deletion, as the next
   * waiter does, and not only at its next renewal (a third of its lease later): by the time the
   * waiter is granted, or at most moments after, the partner's lease is lost.
   */
  @Test
  void aPartnerLosesItsHoldWhenTheCreatorsSessionEndsNotAtItsNextRenewal() throws Exception {
    TcpProxy proxy = zk.proxy();
    ZooKeeperLockBackend creatorBackend = backend(proxy.address());
    LockClient creator = client(creatorBackend);
    LockClient partner = client(backend());
    LockClient stranger = client(backend());
    LockOptions shared =
        LockOptions.defaults()
            .withOwnerId(owner.ownerId())
            .withRenewedLease(millis(30_000)); // renewed every 10 s: far later than the test looks
    Lease created = creator.lock(lockName, shared).tryAcquire().orElseThrow();
    Lease joined = partner.lock(lockName, shared).tryAcquire().orElseThrow();
    assertThat(joined.fencingToken()).isEqualTo(created.fencingToken());
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    joined.onLost(lost::add);

    CompletableFuture<Lease> next =
        CompletableFuture.supplyAsync(() -> stranger.lock(lockName).acquire(millis(30_000)));
    await().atMost(millis(10_000)).until(() -> queueSize() == 2);

    proxy.refuse();
    ZooKeeperTestServers.expireSessionOnServer(
        creatorBackend.curator().getZookeeperClient().getZooKeeper(), zk.connectString());
    Lease strangers = next.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS);
    long grantedAt = System.nanoTime();
    await().atMost(millis(1_000)).until(() -> !lost.isEmpty());
    assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
        .as("the partner learned of the loss at the deletion, not at its renewal")
        .isLessThan(millis(2_000));
    assertThat(joined.isValid()).isFalse();
    assertThat(lost)
        .singleElement()
        .extracting(LeaseLostEvent::fencingToken)
        .isEqualTo(joined.fencingToken());
    assertThat(strangers.fencingToken()).isGreaterThan(joined.fencingToken());
    assertThat(joined.release()).isFalse();
    assertThat(strangers.release()).isTrue();
    proxy.allow();
    await().atMost(millis(10_000)).until(() -> !created.isValid());
  }

  /**
   * A partner's hold is counted in the creator's node, which the partner's session does not own.
   * When the partner's session ends (cut off past its session timeout), its holds are lost, and
   * their count must be taken back once it is connected again: otherwise the node keeps the lock
   * for the owner id after the creator's last release, for as long as the creator's session lives
   * (the torture's partition run: the lock held by nobody for 21 s while others waited).
   */
  @Test
  void aPartnerWhoseSessionEndedTakesBackItsHoldsOnTheCreatorsNode() throws Exception {
    TcpProxy proxy = zk.proxy();
    ZooKeeperLockBackend creator = backend();
    ZooKeeperLockBackend partner = backend(proxy.address());
    ZooKeeperLockBackend stranger = backend();
    long token = granted(get(creator.tryAcquire(lockName, owner, LEASE)));
    assertThat(granted(get(partner.tryAcquire(lockName, owner, LEASE)))).isEqualTo(token);

    proxy.refuse();
    ZooKeeperTestServers.expireSessionOnServer(
        partner.curator().getZookeeperClient().getZooKeeper(), zk.connectString());
    proxy.allow();
    await()
        .atMost(millis(15_000))
        .untilAsserted(
            () ->
                assertThat(new String(admin.getData().forPath(headPath()), "UTF-8"))
                    .as("the partner's hold is taken back after its session ended")
                    .startsWith("1|"));
    assertThat(get(creator.release(lockName, owner, token))).isEqualTo(ReleaseResult.RELEASED);
    LockOwner other = LockOwner.ofGrant(UUID.randomUUID().toString());
    long next = granted(get(stranger.tryAcquire(lockName, other, LEASE)));
    assertThat(next).isGreaterThan(token);
    assertThat(get(stranger.release(lockName, other, next))).isEqualTo(ReleaseResult.RELEASED);
  }

  private int queueSize() throws Exception {
    return zk.nodesUnder(new LockPaths(zk.root()).lockPath(lockName)).size();
  }

  private String headPath() throws Exception {
    String parent = new LockPaths(zk.root()).lockPath(lockName);
    return parent + "/" + LockPaths.queueOrder(admin.getChildren().forPath(parent)).get(0);
  }

  /**
   * By default an owner id is not shared across clients: another client's grant of the same owner
   * id is waited for like a stranger's, so no grant ever lives in a session its holder cannot see.
   */
  @Test
  void byDefaultAnotherClientWithTheSameOwnerIdWaitsLikeAStranger() {
    ZooKeeperLockBackend plainA = zk.backend();
    ZooKeeperLockBackend plainB = zk.backend();
    assertThat(plainA.sharesOwnerIdsAcrossClients()).isFalse();
    io.dlock.LockOptions chain = io.dlock.LockOptions.defaults().withOwnerId("order-default");
    LockClient a = client(plainA);
    LockClient b = client(plainB);
    io.dlock.Lease held = a.lock("default-owner", chain).tryAcquire().orElseThrow();
    io.dlock.Lease inner = a.lock("default-owner", chain).tryAcquire().orElseThrow();
    assertThat(b.lock("default-owner", chain).tryAcquire()).as("another client").isEmpty();
    java.util.concurrent.CompletableFuture<io.dlock.Lease> waiting =
        b.lock("default-owner", chain).acquireAsync(millis(10_000));
    assertThat(inner.release()).isTrue();
    assertThat(waiting).as("one hold of the owner id is still open").isNotDone();
    assertThat(held.release()).isTrue();
    io.dlock.Lease next = waiting.join();
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(next.release()).isTrue();
  }
}
