package io.dlock.zookeeper;

import static io.dlock.zookeeper.ZooKeeperLockBackend.MAX_ROUNDS;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.LeaseEndTimer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * The acquire path of permits, blocking, on a worker thread, one call per owner at a time: a waiter
 * node in the semaphore's queue; the head's grant, one transaction; the watch that wakes the
 * waiter; and the clean-up of a wait that ended without a grant.
 *
 * <p><b>Guarantee.</b> Only the queue head grants itself, and only in a transaction that checks the
 * parent's data version read with the listing, bumps it, creates its holder node and deletes its
 * waiter node. Every grant bumps the version, so a head that counted the holders before another
 * grant fails and counts again: the permits held never exceed a bound because two heads (a stale
 * one and a new one) both found room. Holders leaving do not bump it (they only free permits).
 *
 * <p><b>Fencing.</b> The token is the transaction's zxid (the holder node's {@code czxid}), as the
 * lock queue's is its node's: ordered across the ensemble, it strictly increases across grants of a
 * semaphore, even after its nodes are all gone and the parent is reaped and made again.
 *
 * <p><b>Waking.</b> A waiter behind another watches its predecessor; the head, when the permits do
 * not fit, watches every holder node. A change wakes one waiter: the one whose turn it is. Fairness
 * is strict: a head that needs more permits than are free keeps the waiters behind it waiting, even
 * those that would fit (no barging, as Curator's semaphore).
 */
final class PermitQueue {
  /** See {@link QueueAcquisition}: no watch is left set, so the core tries again after this. */
  private static final Duration RETRY_WITHOUT_WATCH = Duration.ofMillis(10);

  private final CuratorFramework client;
  private final PermitPaths paths;
  private final ZooKeeperFailures failures;
  private final Map<LockAndOwner, PermitHold> holds;
  private final LeaseEndTimer<PermitHold> leaseTimer;
  private final PermitWaiters waiters;

  /**
   * The waiter node of each owner whose last attempt answered Held, for its abandon to delete
   * without listing (see {@link ZooKeeperPermits#abandon}); absent after an attempt that failed,
   * whose node is then looked for.
   */
  private final Map<LockAndOwner, String> waiting = new ConcurrentHashMap<>();

  /** How long the answers to the holders' watches are awaited: the connection timeout. */
  private final Duration watchBound;

  /**
   * @param holds the grants held through this client, shared with the release path
   */
  PermitQueue(
      CuratorFramework client,
      PermitPaths paths,
      ZooKeeperFailures failures,
      Map<LockAndOwner, PermitHold> holds,
      LeaseEndTimer<PermitHold> leaseTimer,
      PermitWaiters waiters) {
    this.client = client;
    this.paths = paths;
    this.failures = failures;
    this.holds = holds;
    this.leaseTimer = leaseTimer;
    this.waiters = waiters;
    this.watchBound =
        Duration.ofMillis(Math.max(1, client.getZookeeperClient().getConnectionTimeoutMs()));
  }

  /**
   * One attempt of {@link io.dlock.spi.PermitStore#tryAcquire}.
   *
   * @param key the semaphore and the owner's key (the raw key: it is hashed for node names)
   * @param askedAt when the core asked, on {@link LeaseEndTimer#now}'s clock: the core counts the
   *     grant's lease from then (see {@link #inTime})
   * @param description {@link LockPaths#description}, made on the caller's thread
   */
  AcquireResult acquire(
      LockAndOwner key, int permits, int count, long leaseNanos, long askedAt, String description)
      throws Exception {
    String parent = paths.semaphorePath(key.lockName());
    String ownerKey = LockPaths.ownerKey(key.owner());
    waiting.remove(key); // known again only if this attempt ends waiting
    long slowest = 0; // the slowest round trip of this attempt so far
    // The owner's waiter node as the last listing showed it, unless a create was sent since.
    String listedNode = null;
    for (int round = 0; round < MAX_ROUNDS; round++) {
      failures.ensureConnected();
      Stat parentStat = new Stat();
      long listing = leaseTimer.now();
      List<String> children = children(parent, parentStat);
      slowest = Math.max(slowest, leaseTimer.now() - listing);
      PermitPaths.Holder mine = holderOf(children, ownerKey);
      if (mine != null) {
        AcquireResult repeated = repeated(key, parent + "/" + mine.name(), leaseNanos);
        if (repeated != null) {
          deleteWaiters(parent, children, ownerKey); // an earlier attempt's, if any is left
          return repeated;
        }
        continue; // gone between the listing and the look: list again
      }
      List<PermitPaths.Waiter> queue = PermitPaths.queue(children);
      int position = -1;
      for (int i = 0; i < queue.size() && position < 0; i++) {
        if (queue.get(i).ownerKey().equals(ownerKey)) {
          position = i;
        }
      }
      if (position < 0) {
        listedNode = null; // the node this create makes is known from the next listing only
        long creating = leaseTimer.now();
        createWaiter(parent, ownerKey, count);
        slowest = Math.max(slowest, leaseTimer.now() - creating);
        continue; // its place is read with the version the grant is checked against
      }
      for (int i = position + 1; i < queue.size(); i++) {
        if (queue.get(i).ownerKey().equals(ownerKey)) {
          // A create repeated after a lost answer made a second node: one place is enough.
          deleteQuietly(parent + "/" + queue.get(i).name());
        }
      }
      String node = parent + "/" + queue.get(position).name();
      listedNode = node;
      PermitWaiters.Watch watcher = waiters.watcher(key);
      if (watcher == null) {
        // Gave up meanwhile: no signal needed.
        return waitingAt(key, node, RETRY_WITHOUT_WATCH);
      }
      if (position > 0) {
        if (watch(watcher, parent + "/" + queue.get(position - 1).name())) {
          return waitingAt(key, node, null);
        }
        continue; // the predecessor left between the listing and the watch
      }
      List<PermitPaths.Holder> holders = PermitPaths.holders(children);
      int held = holders.stream().mapToInt(PermitPaths.Holder::count).sum();
      if (held + count <= permits) {
        if (!inTime(askedAt, slowest, leaseNanos)) {
          // Granted now, the permit would be lost at its first renewal: the core asks again at
          // once (this waiter node keeps its place) and counts the lease from then.
          return waitingAt(key, node, RETRY_WITHOUT_WATCH);
        }
        AcquireResult granted =
            grant(
                key, parent, parentStat.getVersion(), queue.get(0), count, leaseNanos, description);
        if (granted != null) {
          waiters.done(key);
          return granted;
        }
        continue; // another grant came first, or the node changed: count again
      }
      if (watchAll(watcher, parent, holders)) {
        return waitingAt(key, node, null);
      }
      // A holder left between the listing and the watches: there may be room now.
    }
    // The queue kept changing under us and no watch may be left set: have the core try again.
    return listedNode == null
        ? new AcquireResult.Held(RETRY_WITHOUT_WATCH)
        : waitingAt(key, listedNode, RETRY_WITHOUT_WATCH);
  }

  private AcquireResult waitingAt(LockAndOwner key, String node, @Nullable Duration retryAfter) {
    waiting.put(key, node);
    return new AcquireResult.Held(retryAfter);
  }

  /**
   * Takes the waiter node of the owner's last attempt, if it answered Held (and nothing since):
   * exactly the node its abandon must delete.
   */
  @Nullable String forgetWaiter(LockAndOwner key) {
    return waiting.remove(key);
  }

  /**
   * Whether a grant sent now would be of use: the core trusts the lease from {@code askedAt} (the
   * server's lease cannot have begun earlier) and renews it a third of the way in, so the grant's
   * answer and then its first renewal's must both come back within the lease, with a tenth of it to
   * spare. An attempt that spent round trips queueing (list, create, list; or a grant beaten by
   * another and counted again) can have used most of the lease before it grants: on a slow path (a
   * tenth of the lease each way) the permit was then reported EXPIRED moments after it was handed
   * out. Each round trip still to come is estimated by the attempt's slowest so far.
   */
  private boolean inTime(long askedAt, long slowest, long leaseNanos) {
    long answeredBy = leaseTimer.now() - askedAt + 2 * slowest;
    return answeredBy <= leaseNanos - leaseNanos / 10;
  }

  /**
   * The head's grant: one transaction, guarded by the parent's version (see the class comment).
   *
   * @return the grant, or null if the transaction failed on a change made since the listing
   */
  private @Nullable AcquireResult grant(
      LockAndOwner key,
      String parent,
      int version,
      PermitPaths.Waiter head,
      int count,
      long leaseNanos,
      String description)
      throws Exception {
    String holderPath = parent + "/" + PermitPaths.holderName(head.ownerKey(), count);
    CuratorOp bump = client.transactionOp().setData().withVersion(version).forPath(parent);
    CuratorOp create =
        client
            .transactionOp()
            .create()
            .withMode(CreateMode.EPHEMERAL)
            .forPath(holderPath, LockPaths.data(count, description));
    CuratorOp leave = client.transactionOp().delete().forPath(parent + "/" + head.name());
    List<CuratorTransactionResult> results;
    try {
      results = client.transaction().forOperations(bump, create, leave);
    } catch (KeeperException.BadVersionException
        | KeeperException.NoNodeException
        | KeeperException.NodeExistsException e) {
      // Another grant (or our own, whose answer was lost and which Curator sent again) changed
      // the version, or our waiter node is gone: the next round sees which.
      return null;
    }
    Stat stat = null;
    for (CuratorTransactionResult result : results) {
      if (result.getType() == OperationType.SET_DATA) {
        stat = result.getResultStat();
      }
    }
    if (stat == null) {
      throw new IllegalStateException("ZooKeeper answered a transaction without its setData stat");
    }
    // One transaction, one zxid: the parent's mzxid is the holder node's czxid.
    long token = stat.getMzxid();
    PermitHold hold = new PermitHold(key, holderPath, token, leaseTimer.now() + leaseNanos);
    holds.put(key, hold);
    leaseTimer.register(hold, hold.leaseEndNanos);
    return new AcquireResult.Granted(token, 1);
  }

  /**
   * The owner holds permits already (a repeated request, or a grant whose answer was lost): the
   * same token, the lease extended, nothing added.
   *
   * @return null if the holder node is gone meanwhile
   */
  private @Nullable AcquireResult repeated(LockAndOwner key, String path, long leaseNanos)
      throws Exception {
    Stat stat = client.checkExists().forPath(path);
    if (stat == null) {
      return null;
    }
    long end = leaseTimer.now() + leaseNanos;
    PermitHold hold = holds.get(key);
    if (hold == null || hold.token != stat.getCzxid() || !hold.path.equals(path)) {
      hold = new PermitHold(key, path, stat.getCzxid(), end);
      holds.put(key, hold);
    } else {
      hold.extendTo(end);
    }
    leaseTimer.register(hold, hold.leaseEndNanos);
    waiters.done(key);
    return new AcquireResult.Granted(stat.getCzxid(), 1);
  }

  /**
   * A wait that ended without a grant: deletes the owner's waiter nodes, and a holder node whose
   * grant was never answered (a transaction whose answer was lost; the core never saw the grant, so
   * nobody would release it before the session ends). A grant that was answered is the core's to
   * release, late or not.
   */
  void leave(LockAndOwner key) throws Exception {
    failures.ensureConnected();
    String parent = paths.semaphorePath(key.lockName());
    String ownerKey = LockPaths.ownerKey(key.owner());
    List<String> children = children(parent, new Stat());
    deleteWaiters(parent, children, ownerKey);
    PermitPaths.Holder unanswered = holderOf(children, ownerKey);
    if (unanswered != null && !holds.containsKey(key)) {
      deleteQuietly(parent + "/" + unanswered.name());
    }
  }

  private void deleteWaiters(String parent, List<String> children, String ownerKey)
      throws Exception {
    for (PermitPaths.Waiter waiter : PermitPaths.queue(children)) {
      if (waiter.ownerKey().equals(ownerKey)) {
        deleteQuietly(parent + "/" + waiter.name());
      }
    }
  }

  private void createWaiter(String parent, String ownerKey, int count) throws Exception {
    for (int tries = 1; ; tries++) {
      try {
        client
            .create()
            .creatingParentContainersIfNeeded()
            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
            .forPath(PermitPaths.waiterPrefix(parent, ownerKey, count));
        return;
      } catch (KeeperException.NoNodeException e) {
        // The container reaper deleted the empty parent between its creation and this node's, as
        // for the lock queue (see QueueAcquisition): nothing was created, so create again.
        if (tries >= 3) {
          throw e;
        }
      }
    }
  }

  /**
   * Sets {@code watcher} on {@code path}; false if the node is gone. getData, not exists: on a
   * missing node exists would leave a watch for its creation.
   */
  private boolean watch(PermitWaiters.Watch watcher, String path) throws Exception {
    watcher.setting(path);
    try {
      client.getData().usingWatcher(watcher).forPath(path);
      return true;
    } catch (KeeperException.NoNodeException e) {
      return false;
    } finally {
      watcher.settled(path);
    }
  }

  /**
   * Watches every holder, the requests pipelined on the one connection (one round trip however many
   * holders); false if one is gone already (there may be room: look again).
   */
  private boolean watchAll(
      PermitWaiters.Watch watcher, String parent, List<PermitPaths.Holder> holders)
      throws Exception {
    List<CompletableFuture<KeeperException.Code>> answers = new ArrayList<>(holders.size());
    for (PermitPaths.Holder holder : holders) {
      CompletableFuture<KeeperException.Code> answer = new CompletableFuture<>();
      answers.add(answer);
      String path = parent + "/" + holder.name();
      watcher.setting(path);
      client
          .getData()
          .usingWatcher(watcher)
          .inBackground(
              (c, event) -> {
                // On the event thread, after the client registered the watcher (on success).
                watcher.settled(path);
                answer.complete(KeeperException.Code.get(event.getResultCode()));
              })
          .forPath(path);
    }
    boolean all = true;
    for (CompletableFuture<KeeperException.Code> answer : answers) {
      KeeperException.Code code = answer.get(watchBound.toMillis(), TimeUnit.MILLISECONDS);
      if (code == KeeperException.Code.NONODE) {
        all = false;
      } else if (code != KeeperException.Code.OK) {
        throw KeeperException.create(code);
      }
    }
    return all;
  }

  /** The children of {@code parent} and its stat, read together; empty if it does not exist. */
  private List<String> children(String parent, Stat stat) throws Exception {
    try {
      return client.getChildren().storingStatIn(stat).forPath(parent);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }

  private static PermitPaths.@Nullable Holder holderOf(List<String> children, String ownerKey) {
    for (PermitPaths.Holder holder : PermitPaths.holders(children)) {
      if (holder.ownerKey().equals(ownerKey)) {
        return holder;
      }
    }
    return null;
  }

  private void deleteQuietly(String path) throws Exception {
    try {
      client.delete().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      // already gone: that is what we wanted
    }
  }
}
