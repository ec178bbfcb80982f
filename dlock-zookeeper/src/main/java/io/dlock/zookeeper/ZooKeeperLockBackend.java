package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.Failures;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks on ZooKeeper through Apache Curator: a fair queue of ephemeral sequential nodes per lock.
 *
 * <p><b>Guarantee.</b> The holder of a lock is the owner of the lowest queue node under the lock's
 * parent; ZooKeeper orders every create in one total order, so at most one owner is lowest at a
 * time. The fencing token is the holder node's {@code czxid}, which is ordered across the whole
 * ensemble and therefore strictly increases across grants, even when the parent is deleted and
 * created again. A waiter watches only the node just before its own, so a release wakes one client
 * (no herd).
 *
 * <p><b>Leases.</b> A queue node lives no longer than the session that created it: a crashed or
 * partitioned holder's node disappears when the ensemble expires its session. While the holder's
 * process lives, the lease time is also enforced: when a lease is neither released nor renewed
 * before it ends (a fixed lease, or renewal calls that stop), this backend deletes the holder's
 * node itself. It counts from when it received the grant or renewal, which is never earlier than
 * when the core started counting, so the node always outlives the holder's own view of its lease.
 * Connection events are passed to the core: SUSPENDED makes leases uncertain, RECONNECTED with the
 * same session makes them valid again, LOST (session expired, or Curator's simulated loss after the
 * session timeout) loses them all.
 *
 * <p><b>Latency.</b> The common calls (a new node and its queue listing, pipelined in one round
 * trip; a waiter's re-attempt, whose listing was requested when its predecessor's watch fired; the
 * release of a last hold; the abandon of a wait) send their requests from the calling thread and
 * complete on ZooKeeper's event thread; everything that must block runs on worker threads. The
 * calls of one owner on one lock still run one after another, in call order.
 *
 * <p><b>Inspection.</b> {@link #inspect} and {@link #forceRelease} read the queue heads after a
 * {@code sync}; the holder description and grant time are kept in the node's data, next to the hold
 * count.
 *
 * <p><b>Failures.</b> An acquisition or release made while the client is connecting (just started,
 * or reconnecting) waits for the connection, at most the connection timeout and never longer than
 * the core's bound for the caller; it then fails with {@link BackendUnavailableException}. Renewal
 * and inspection fail at once while not connected. Curator retries a call at most three times
 * within the connection timeout.
 *
 * <p><b>Session changes.</b> A waiter's predecessor watch dies with its session, so waiters are
 * woken on session loss and on a new session and queue again ({@link WaiterWakeUps}).
 */
public final class ZooKeeperLockBackend implements LockBackend {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
  private static final AtomicInteger IDS = new AtomicInteger();
  private static final int MAX_ROUNDS = 8;

  /**
   * The retry bound of an attempt that ends without a watch set (the queue kept changing under it):
   * with no watch there is no release signal to wait for, so the core tries again after this.
   */
  private static final Duration RETRY_WITHOUT_WATCH = Duration.ofMillis(10);

  private final CuratorFramework client;
  private final boolean ownsClient;
  private final LockPaths paths;
  private final String description;
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final ConcurrentHashMap<Key, QueueEntry> entries = new ConcurrentHashMap<>();

  /** Registered lease ends, earliest first; one timer task runs at the earliest (see tick). */
  private final java.util.concurrent.ConcurrentSkipListSet<LeaseMark> leaseMarks =
      new java.util.concurrent.ConcurrentSkipListSet<>();

  private final AtomicLong leaseSeq = new AtomicLong();
  private final long originNanos = System.nanoTime();
  private final java.util.concurrent.locks.ReentrantLock tickLock =
      new java.util.concurrent.locks.ReentrantLock();
  private @Nullable ScheduledFuture<?> nextTick; // guarded by tickLock
  private long nextTickAt; // guarded by tickLock

  /**
   * Holds this client counted on nodes of other sessions (owner ids shared across clients) when its
   * own session ended: they are reported lost, but the count lives in the other session's node,
   * which would otherwise keep the lock for that session's whole life. Taken back once connected
   * again.
   */
  private final Set<TakeBack> takeBackAfterReconnect = ConcurrentHashMap.newKeySet();

  /** Waits whose clean-up failed for want of a connection: retried on reconnection. */
  private final Set<Key> abandonAfterReconnect = ConcurrentHashMap.newKeySet();

  /** The last pending call per key: calls of one owner on one lock run one after another. */
  private final ConcurrentHashMap<Key, CompletableFuture<Void>> tails = new ConcurrentHashMap<>();

  private final ConcurrentHashMap<String, ReleaseListener> listeners = new ConcurrentHashMap<>();
  private final AtomicLong watchNotifications = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ConnectionStateListener connectionListener = this::onConnectionState;
  private final ConnectionGate gate;
  private final WaiterWakeUps wakeUps = new WaiterWakeUps();
  private volatile @Nullable BackendEvents events;
  private volatile long sessionId;

  /**
   * A LOST was applied since {@link #sessionId} was last set: the new session that follows is
   * already accounted for, and reporting its loss again would undo the grants of the waiters woken
   * by the first report, whose calls waited for the new session.
   */
  private volatile boolean lossApplied;

  /** Test seam: runs when a create's answer arrived, before its node is tracked or dropped. */
  private volatile java.util.function.@Nullable Consumer<String> beforeTracking;

  /**
   * Test seam: runs when a join of an owner id's hold has read the node, before it writes the new
   * count.
   */
  private volatile java.util.function.@Nullable Consumer<String> beforeJoinWrite;

  /** See {@link ZooKeeperLockSettings#withOwnerIdsSharedAcrossClients}. */
  private final boolean shareOwnerIds;

  private ZooKeeperLockBackend(
      CuratorFramework client, boolean ownsClient, String rootPath, boolean shareOwnerIds) {
    this.shareOwnerIds = shareOwnerIds;
    this.client = client;
    this.ownsClient = ownsClient;
    this.paths = new LockPaths(rootPath);
    this.description = client.getZookeeperClient().getCurrentConnectionString() + rootPath;
    int id = IDS.incrementAndGet();
    // Calls block on ZooKeeper round trips on these threads, never on the caller's.
    this.workers =
        new ThreadPoolExecutor(
            64,
            64,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            daemonThreads("dlock-zk-" + id + "-worker"));
    this.workers.allowCoreThreadTimeOut(true);
    this.timer = new ScheduledThreadPoolExecutor(1, daemonThreads("dlock-zk-" + id + "-leases"));
    this.timer.setRemoveOnCancelPolicy(true);
    this.gate =
        new ConnectionGate(
            () -> client.getZookeeperClient().isConnected(),
            timer,
            Duration.ofMillis(client.getZookeeperClient().getConnectionTimeoutMs()),
            description);
    this.sessionId = currentSessionId();
    client.getConnectionStateListenable().addListener(connectionListener);
    // After the listener is added: a client that connects after this check reports CONNECTED to
    // the listener, which opens the gate; one connected before it is seen connected here.
    if (client.getZookeeperClient().isConnected()) {
      sessionId = currentSessionId();
      gate.open();
    }
  }

  /**
   * Connects to the ensemble of {@code settings} and waits for the first connection, at most the
   * connection timeout.
   *
   * @throws BackendUnavailableException if no connection was made within the connection timeout
   */
  public static ZooKeeperLockBackend connect(ZooKeeperLockSettings settings) {
    Objects.requireNonNull(settings, "settings");
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(settings.connectString())
            .sessionTimeoutMs(toIntMillis(settings.sessionTimeout()))
            .connectionTimeoutMs(toIntMillis(settings.connectionTimeout()))
            .ensembleTracker(settings.followEnsembleChanges())
            // Bounded: at most 3 retries, so a call never outlives the caller's bound by much.
            .retryPolicy(
                new BoundedExponentialBackoffRetry(
                    50, Math.max(50, toIntMillis(settings.connectionTimeout()) / 4), 3));
    char[] password = settings.digestPassword();
    if (settings.aclMode() == ZooKeeperLockSettings.AclMode.DIGEST && password != null) {
      byte[] auth =
          (settings.digestUser() + ":" + new String(password)).getBytes(StandardCharsets.UTF_8);
      java.util.Arrays.fill(password, '\0');
      builder.authorization("digest", auth).aclProvider(creatorOnly());
    } else if (settings.aclMode() == ZooKeeperLockSettings.AclMode.SASL) {
      builder.aclProvider(creatorOnly());
    }
    CuratorFramework client = builder.build();
    client.start();
    boolean connected;
    try {
      connected =
          client.blockUntilConnected(
              toIntMillis(settings.connectionTimeout()), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      client.close();
      throw new BackendUnavailableException(
          "Interrupted while connecting to ZooKeeper at " + settings.connectString(), e);
    }
    if (!connected) {
      client.close();
      throw new BackendUnavailableException(
          "No connection to ZooKeeper at "
              + settings.connectString()
              + " within "
              + settings.connectionTimeout());
    }
    return new ZooKeeperLockBackend(
        client, true, settings.rootPath(), settings.ownerIdsSharedAcrossClients());
  }

  /**
   * A backend on an existing, started Curator client (its namespace applies). The client is not
   * closed by {@link #close()}; its connection and retry settings are the caller's.
   *
   * @param rootPath see {@link ZooKeeperLockSettings#withRootPath(String)}
   */
  public static ZooKeeperLockBackend using(CuratorFramework client, String rootPath) {
    Objects.requireNonNull(client, "client");
    return new ZooKeeperLockBackend(
        client, false, ZooKeeperLockSettings.requireValidRootPath(rootPath), false);
  }

  private static ACLProvider creatorOnly() {
    return new ACLProvider() {
      @Override
      public List<ACL> getDefaultAcl() {
        return ZooDefs.Ids.CREATOR_ALL_ACL;
      }

      @Override
      public List<ACL> getAclForPath(String path) {
        return ZooDefs.Ids.CREATOR_ALL_ACL;
      }
    };
  }

  private static int toIntMillis(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
  }

  @Override
  public boolean sharesOwnerAcrossClients() {
    return shareOwnerIds;
  }

  @Override
  public String name() {
    return "zookeeper";
  }

  /** The Curator client under this backend; for tests and diagnostics. */
  public CuratorFramework curator() {
    return client;
  }

  /** The root path under which the lock queues live. */
  public String rootPath() {
    return paths.root();
  }

  /**
   * Watch notifications (node events, not connection-state events) this backend has received since
   * it was created. A release wakes exactly one waiter, so it costs one notification.
   */
  public long watchNotifications() {
    return watchNotifications.get();
  }

  // ---- acquisition ----------------------------------------------------------------------------

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, String owner, Duration lease) {
    Key key = new Key(lockName, owner);
    // On the caller's thread: the description names the thread that acquires.
    String description =
        LockPaths.description(System.currentTimeMillis(), HolderDescription.of(owner));
    long leaseNanos = lease.toNanos();
    WaiterWakeUps.Registration waiting = wakeUps.asked(lockName, owner);
    // The registration ends before the core sees the grant (and stops watching the lock).
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    submitAsync(
            key,
            "acquire '" + lockName + "'",
            true,
            () -> acquireFast(key, leaseNanos, description))
        .whenComplete(
            (result, failure) -> {
              if (failure != null) {
                answer.completeExceptionally(failure);
                return;
              }
              if (result instanceof AcquireResult.Granted) {
                wakeUps.granted(waiting);
              }
              answer.complete(result);
            });
    return answer;
  }

  /**
   * The common cases without a thread hop and with one round trip of latency: a new queue node is
   * created and the queue listed in one pipelined exchange (ZooKeeper answers the requests of one
   * session in order, and the listing is read after the create is applied); a waiter's re-attempt
   * uses the listing already requested when its predecessor's watch fired. Everything else (lost
   * create answers, re-entry, joining an owner id's hold, setting a watch) runs the blocking {@link
   * #acquire} on a worker thread. Runs on the caller's thread or the thread that finished the
   * previous call of the same key, and never blocks.
   */
  private CompletableFuture<AcquireResult> acquireFast(
      Key key, long leaseNanos, String description) {
    QueueEntry entry = entries.computeIfAbsent(key, k -> new QueueEntry());
    String node = entry.node;
    if (entry.uncertain || entry.localHolds > 0 || !client.getZookeeperClient().isConnected()) {
      return acquireOnWorker(key, leaseNanos, description, null);
    }
    String parent = paths.lockPath(key.lockName);
    if (node != null) {
      Prefetch prefetch = entry.prefetch;
      entry.prefetch = null;
      CompletableFuture<CuratorEvent> listing =
          prefetch != null && prefetch.node.equals(node) ? prefetch.children : listAsync(parent);
      return listing
          .exceptionally(e -> null)
          .thenCompose(event -> decide(key, entry, node, event, leaseNanos, description));
    }
    entry.uncertain = true; // until the create's answer arrives
    CompletableFuture<CuratorEvent> created = new CompletableFuture<>();
    try {
      client
          .create()
          .creatingParentContainersIfNeeded()
          .withProtection()
          .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
          .inBackground((c, event) -> created.complete(event))
          .forPath(
              paths.nodePrefix(key.lockName, LockPaths.ownerKey(key.owner)),
              LockPaths.data(1, description));
    } catch (Exception e) {
      created.completeExceptionally(e);
    }
    CompletableFuture<CuratorEvent> listing = listAsync(parent);
    return created
        .thenCombine(listing.exceptionally(e -> null), Map::entry)
        .thenCompose(
            answers -> {
              CuratorEvent create = answers.getKey();
              Stat stat = create.getStat();
              if (create.getResultCode() != KeeperException.Code.OK.intValue() || stat == null) {
                // Not created, or no answer: the blocking path adopts a node we may have made.
                return acquireOnWorker(key, leaseNanos, description, null);
              }
              String path = create.getName();
              runBeforeTracking(path);
              if (!entry.track(path, stat, description)) {
                // The session ended while the create was under way, and Curator retried it in
                // the new session: nobody tracks this node, which would block the queue for as
                // long as this client lives. Delete it and start over with a fresh entry.
                deleteInBackground(path);
                return acquireOnWorker(key, leaseNanos, description, null);
              }
              return decide(key, entry, path, answers.getValue(), leaseNanos, description);
            });
  }

  /**
   * Grants if {@code node} heads the queue listed in {@code listing} (requested after {@code node}
   * was created); otherwise hands over to the blocking path, with the listing if it holds our node.
   */
  private CompletableFuture<AcquireResult> decide(
      Key key,
      QueueEntry entry,
      String node,
      @Nullable CuratorEvent listing,
      long leaseNanos,
      String description) {
    if (listing == null || listing.getResultCode() != KeeperException.Code.OK.intValue()) {
      return acquireOnWorker(key, leaseNanos, description, null);
    }
    List<String> queue = LockPaths.queueOrder(listing.getChildren());
    int position = queue.indexOf(node.substring(node.lastIndexOf('/') + 1));
    if (position == 0 && node.equals(entry.node) && entry.localHolds == 0) {
      entry.localHolds = 1;
      extendLease(key, entry, System.nanoTime() + leaseNanos);
      return CompletableFuture.completedFuture(
          new AcquireResult.Granted(entry.czxid, entry.holdCount));
    }
    // Waiting, joining an owner id's hold, or our node is missing from a listing that may have
    // been read before a create that had to make the parent first: the blocking path decides.
    return acquireOnWorker(key, leaseNanos, description, position > 0 ? queue : null);
  }

  private CompletableFuture<AcquireResult> acquireOnWorker(
      Key key, long leaseNanos, String description, @Nullable List<String> listing) {
    return onWorker(
        "acquire '" + key.lockName + "'",
        () -> withEntry(key, true, e -> acquire(key, e, leaseNanos, description, listing)));
  }

  /**
   * One attempt, blocking (on a worker thread).
   *
   * @param listing the queue in order as read after this owner's node was created, or null to read
   *     it
   */
  private AcquireResult acquire(
      Key key,
      QueueEntry entry,
      long leaseNanos,
      String description,
      @Nullable List<String> listing)
      throws Exception {
    String parent = paths.lockPath(key.lockName);
    String ownerKey = LockPaths.ownerKey(key.owner);
    for (int round = 0; round < MAX_ROUNDS; round++) {
      String node = entry.node;
      if (node != null && entry.localHolds > 0) {
        // The same owner again (an owner id): count the hold on the server.
        if (changeHoldCount(entry, +1) == null) {
          forget(entry);
          continue;
        }
        entry.localHolds++;
        extendLease(key, entry, System.nanoTime() + leaseNanos);
        return new AcquireResult.Granted(entry.czxid, entry.holdCount);
      }
      if (node == null) {
        if (entry.uncertain) {
          adoptOrDeleteOrphans(entry, parent, ownerKey);
        }
        if (entry.node == null) {
          create(entry, key, description);
        }
        node = Objects.requireNonNull(entry.node);
      }
      List<String> queue = round == 0 && listing != null ? listing : children(parent);
      String mine = node.substring(node.lastIndexOf('/') + 1);
      int position = queue.indexOf(mine);
      if (position < 0) {
        // Our node is gone (deleted behind our back, or its session ended): queue again.
        forget(entry);
        continue;
      }
      if (position == 0) {
        entry.localHolds = 1;
        extendLease(key, entry, System.nanoTime() + leaseNanos);
        return new AcquireResult.Granted(entry.czxid, entry.holdCount);
      }
      String head = queue.get(0);
      if (shareOwnerIds && ownerKey.equals(LockPaths.ownerKeyOf(head))) {
        // The same owner id holds the lock through another client: join its hold. (Off by
        // default: then another client's grant of this owner id is waited for like a stranger's.)
        AcquireResult joined = joinHold(key, entry, parent + "/" + head, leaseNanos);
        if (joined != null) {
          return joined;
        }
        continue;
      }
      String predecessor = parent + "/" + queue.get(position - 1);
      // Held(null) makes the core wait for a release signal only, so it is answered only with a
      // watch whose notification (and so its signal) is still to come: one set earlier on this
      // predecessor that has not fired, or one set now. A watch that already fired is never
      // trusted again, even when a listing older than its event (a prefetch requested for an
      // earlier event, or a listing read before the deletion) still shows its node.
      PredecessorWatch current = entry.watch;
      if (current != null && !current.fired && current.path.equals(predecessor)) {
        return new AcquireResult.Held(null);
      }
      if (watch(key, entry, predecessor)) {
        return new AcquireResult.Held(null);
      }
      // The predecessor left between the listing and the watch: look again.
    }
    // The queue kept changing under us and no watch is left set, so no signal may ever come:
    // have the core try again shortly instead.
    return new AcquireResult.Held(RETRY_WITHOUT_WATCH);
  }

  /** Forgets the entry's node, which is gone, and the watch on it if it was another session's. */
  private void forget(QueueEntry entry) {
    SharedNodeWatch shared = entry.sharedWatch;
    entry.sharedWatch = null;
    if (shared != null) {
      removeSharedWatch(shared);
    }
    entry.forgetNode();
  }

  private void create(QueueEntry entry, Key key, String description) throws Exception {
    ensureConnected();
    Stat stat = new Stat();
    entry.uncertain = true;
    String path =
        client
            .create()
            .storingStatIn(stat)
            .creatingParentContainersIfNeeded()
            .withProtection()
            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
            .forPath(
                paths.nodePrefix(key.lockName, LockPaths.ownerKey(key.owner)),
                LockPaths.data(1, description));
    runBeforeTracking(path);
    if (!entry.track(path, stat, description)) {
      // The session ended while the create was under way (see acquireFast): an untracked node
      // of the new session would block the queue. Delete it; the caller learns of the lost
      // session.
      deleteQuietly(path);
      throw new KeeperException.SessionExpiredException();
    }
  }

  /** Deletes a node without waiting; a failure leaves it to its session's end. */
  private void deleteInBackground(String path) {
    try {
      client
          .delete()
          .inBackground(
              (c, event) -> {
                if (event.getResultCode() != KeeperException.Code.OK.intValue()
                    && event.getResultCode() != KeeperException.Code.NONODE.intValue()) {
                  log.warn(
                      "Could not delete the untracked lock node {}: {}",
                      path,
                      KeeperException.Code.get(event.getResultCode()));
                }
              })
          .forPath(path);
    } catch (Exception e) {
      log.warn("Could not delete the untracked lock node {}: {}", path, e.toString());
    }
  }

  /**
   * After a create whose answer was lost, looks for nodes of this owner created by this session:
   * adopts the first, deletes the others (Curator's protected-mode idea, across calls).
   */
  private void adoptOrDeleteOrphans(QueueEntry entry, String parent, String ownerKey)
      throws Exception {
    long session = currentSessionId();
    for (String child : children(parent)) {
      if (!ownerKey.equals(LockPaths.ownerKeyOf(child))) {
        continue;
      }
      String path = parent + "/" + child;
      Stat stat = client.checkExists().forPath(path);
      if (stat == null || stat.getEphemeralOwner() != session) {
        continue;
      }
      // The first is adopted, unless the session ended meanwhile (then, like any other, it is
      // deleted: nobody would track it). The data (hold count, description) is read before it is
      // changed.
      if (entry.node != null || !entry.adopt(path, stat)) {
        deleteQuietly(path);
      }
    }
    entry.uncertain = false;
  }

  /**
   * Joins the hold of this owner id on {@code headPath}, a node another client of the owner id
   * created: the hold count is raised with a setData checked against the version just read, so the
   * write succeeds only on the node as read, still there. A last release deletes the node with a
   * version-checked delete too, so of a join and a last release that race, exactly one succeeds:
   * the join (the delete then fails and is retried as a decrement) or the delete (the join then
   * finds no node). Nothing of the node is recorded in the entry before the write succeeded, and
   * the token handed out is the {@code czxid} the successful write answered with: a join never
   * returns the token of a deleted node.
   *
   * <p>The node lives in its creator's session, which this client does not see. A persistent watch
   * on it is registered <em>before</em> the write (see {@link SharedNodeWatch}), so that its
   * deletion at any moment after the write is told to this client when the deletion is applied, at
   * the same time as the next waiter, who still needs a listing round trip before it is granted.
   *
   * @return the grant, or null if the node is gone (the caller looks at the queue again)
   */
  private @Nullable AcquireResult joinHold(
      Key key, QueueEntry entry, String headPath, long leaseNanos) throws Exception {
    ensureConnected();
    SharedNodeWatch watch = new SharedNodeWatch(key, entry, headPath);
    client
        .watchers()
        .add()
        .withMode(org.apache.zookeeper.AddWatchMode.PERSISTENT)
        .usingWatcher(watch)
        .forPath(headPath);
    boolean joined = false;
    try {
      for (int round = 0; round < MAX_ROUNDS * 4; round++) {
        ensureConnected();
        Stat read = new Stat();
        LockPaths.NodeData parsed;
        try {
          parsed = LockPaths.NodeData.parse(client.getData().storingStatIn(read).forPath(headPath));
        } catch (KeeperException.NoNodeException e) {
          return null;
        }
        runBeforeJoinWrite(headPath);
        int holds = parsed.holds() + 1;
        Stat written;
        try {
          written =
              client
                  .setData()
                  .withVersion(read.getVersion())
                  .forPath(headPath, LockPaths.data(holds, parsed.description()));
        } catch (KeeperException.BadVersionException e) {
          continue; // another client of the owner id changed the count: read again
        } catch (KeeperException.NoNodeException e) {
          return null; // its last hold was released meanwhile
        }
        if (watch.gone) {
          return null; // deleted right after the write: nothing left to take back
        }
        String ownNode = entry.node;
        if (!entry.join(headPath, written, holds, parsed.description())) {
          // The session ended while joining: the entry is detached and its holds reported lost,
          // so nobody would ever take this hold back; the node lives in another session, which
          // would keep it for as long as that session lives.
          takeBackQuietly(headPath, written.getCzxid(), 1);
          throw new KeeperException.SessionExpiredException();
        }
        joined = true;
        entry.sharedWatch = watch;
        if (ownNode != null && !ownNode.equals(headPath)) {
          // Behind the head since before the join (which was lower, and there): never a head, so
          // nobody joined it. A failure leaves it to the background.
          try {
            deleteQuietly(ownNode);
          } catch (Exception e) {
            deleteInBackground(ownNode);
          }
        }
        entry.localHolds = 1;
        if (watch.gone) {
          // Deleted while being recorded: the watch's report may have found no hold yet.
          sharedNodeGone(watch);
        }
        extendLease(key, entry, System.nanoTime() + leaseNanos);
        return new AcquireResult.Granted(written.getCzxid(), holds);
      }
      throw new BackendUnavailableException(
          "The hold count of "
              + headPath
              + " kept changing; gave up after "
              + MAX_ROUNDS * 4
              + " tries");
    } finally {
      if (!joined) {
        removeSharedWatch(watch);
      }
    }
  }

  /**
   * Takes back {@code holds} holds of this client on a node of another session, with a
   * version-checked decrement (a delete at zero), if it is still the node with {@code czxid}. Best
   * effort: a failure leaves the holds counted until the node's session ends.
   */
  private void takeBackQuietly(String path, long czxid, int holds) {
    try {
      for (int round = 0; round < MAX_ROUNDS * 4; round++) {
        Stat stat = new Stat();
        LockPaths.NodeData parsed;
        try {
          parsed = LockPaths.NodeData.parse(client.getData().storingStatIn(stat).forPath(path));
        } catch (KeeperException.NoNodeException e) {
          return;
        }
        if (stat.getCzxid() != czxid) {
          return;
        }
        int left = parsed.holds() - holds;
        try {
          if (left <= 0) {
            client.delete().withVersion(stat.getVersion()).forPath(path);
          } else {
            client
                .setData()
                .withVersion(stat.getVersion())
                .forPath(path, LockPaths.data(left, parsed.description()));
          }
          return;
        } catch (KeeperException.BadVersionException e) {
          // changed by another holder: read again
        } catch (KeeperException.NoNodeException e) {
          return;
        }
      }
    } catch (Exception e) {
      log.warn("Could not take back {} hold(s) on {}: {}", holds, path, e.toString());
    }
  }

  /**
   * A persistent watch on a node of this owner id created by another client (session): it stays
   * registered through the count changes of other holders, and its deletion (its session ended, or
   * a forced release) marks this client's holds on it lost at once, instead of at the next renewal.
   */
  private final class SharedNodeWatch implements Watcher {
    final Key key;
    final QueueEntry entry;
    final String path;
    volatile boolean gone;

    SharedNodeWatch(Key key, QueueEntry entry, String path) {
      this.key = key;
      this.entry = entry;
      this.path = path;
    }

    @Override
    public void process(WatchedEvent event) {
      if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
        gone = true; // before the check below: see joinHold
        sharedNodeGone(this);
      }
    }
  }

  private void removeSharedWatch(SharedNodeWatch watch) {
    if (!client.getZookeeperClient().isConnected()) {
      return; // dropped with the connection's watches if the session ends; else a stale no-op
    }
    try {
      client
          .watchers()
          .remove(watch)
          .ofType(Watcher.WatcherType.Persistent)
          .quietly()
          .inBackground()
          .forPath(watch.path);
    } catch (Exception e) {
      log.debug("Could not remove the watch on {}: {}", watch.path, e.toString());
    }
  }

  private void sharedNodeGone(SharedNodeWatch watch) {
    QueueEntry entry = watch.entry;
    if (entries.get(watch.key) != entry
        || !watch.path.equals(entry.node)
        || entry.localHolds <= 0
        || entry.deleting) {
      return; // released by this client, or not (yet) a hold
    }
    BackendEvents sink = events;
    if (sink != null) {
      sink.leaseLost(
          watch.key.lockName,
          watch.key.owner,
          "the owner id's node "
              + watch.path
              + " was deleted (the session of the client that created it ended, or a forced"
              + " release)");
    }
  }

  /**
   * Sets a watch on {@code predecessor}. The watch is the entry's current one from before the
   * request is sent, so its notification, which may be handled on the event thread before this call
   * returns, always finds it (and marks it fired).
   *
   * @return false if it is already gone (no watch is left behind then)
   */
  private boolean watch(Key key, QueueEntry entry, String predecessor) throws Exception {
    ensureConnected();
    PredecessorWatch watch = new PredecessorWatch(predecessor);
    watch.watcher = event -> onPredecessorEvent(key, watch, event);
    entry.watch = watch;
    boolean set = false;
    try {
      // getData, not exists: on a missing node exists would leave a watch for its creation.
      client.getData().usingWatcher(watch.watcher).forPath(predecessor);
      set = true;
    } catch (KeeperException.NoNodeException e) {
      return false;
    } finally {
      if (!set && entry.watch == watch) {
        // No answer, or the node is gone: the client registered nothing, so this watch must not
        // stand for a signal to come in a later attempt.
        entry.watch = null;
      }
    }
    return true;
  }

  private void onPredecessorEvent(Key key, PredecessorWatch watch, WatchedEvent event) {
    if (event.getType() == Watcher.Event.EventType.None) {
      return; // connection-state change: the watch stays registered and is re-set on reconnect
    }
    watchNotifications.incrementAndGet();
    // Marked before the signal below: an attempt that still finds this watch unfired is sure of
    // the signal, which then arrives during or after it (so the core tries again).
    watch.fired = true;
    QueueEntry entry = entries.get(key);
    if (entry != null) {
      String node = entry.node;
      if (node != null
          && event.getType() == Watcher.Event.EventType.NodeDeleted
          && client.getZookeeperClient().isConnected()) {
        // Ask for the queue now, while the core wakes the waiter: its re-attempt uses this answer
        // (read after the deletion, so no older than one the re-attempt would read itself). It
        // may still be older than what an attempt in flight reads next; that costs at most a
        // round, because a fired watch is never trusted again.
        entry.prefetch = new Prefetch(node, listAsync(paths.lockPath(key.lockName)));
      }
    }
    ReleaseListener listener = listeners.get(key.lockName);
    if (listener != null) {
      try {
        listener.released(key.owner);
      } catch (RuntimeException e) {
        log.warn("A release listener of '{}' failed: {}", key.lockName, e.toString());
      }
    }
  }

  // ---- release, abandon -----------------------------------------------------------------------

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, String owner, long fencingToken) {
    Key key = new Key(lockName, owner);
    return submitAsync(
        key, "release '" + lockName + "'", true, () -> releaseFast(key, fencingToken));
  }

  /**
   * The last hold of a node whose version we know: one version-checked delete, sent from the
   * calling thread. Anything else (a hold count above one, an unknown version, another client of
   * the same owner id changed the count, a grant other than the one tracked) runs the blocking
   * {@link #releaseOwn} on a worker.
   */
  private CompletableFuture<ReleaseResult> releaseFast(Key key, long fencingToken) {
    QueueEntry entry = entries.get(key);
    String node = entry == null ? null : entry.node;
    if (entry == null
        || node == null
        || !entry.isGrant(fencingToken)
        || entry.localHolds != 1
        || entry.holdCount != 1
        || entry.version < 0
        || !client.getZookeeperClient().isConnected()) {
      return releaseOnWorker(key, fencingToken);
    }
    CompletableFuture<CuratorEvent> deleted = new CompletableFuture<>();
    entry.deleting = true;
    try {
      client
          .delete()
          .withVersion(entry.version)
          .inBackground((c, event) -> deleted.complete(event))
          .forPath(node);
    } catch (Exception e) {
      deleted.completeExceptionally(e);
    }
    return deleted.thenCompose(
        event -> {
          KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
          if (code != KeeperException.Code.OK) {
            entry.deleting = false;
          }
          switch (code) {
            case OK:
              entry.holdCount = 0;
              entry.localHolds = 0;
              removeEntry(key, entry);
              return CompletableFuture.completedFuture(ReleaseResult.RELEASED);
            case NONODE:
              entry.localHolds = 0;
              removeEntry(key, entry);
              return CompletableFuture.completedFuture(ReleaseResult.NOT_HELD);
            case BADVERSION:
              entry.version = -1; // another client of the same owner id changed the count
              return releaseOnWorker(key, fencingToken);
            default:
              return CompletableFuture.failedFuture(
                  new BackendUnavailableException(
                      "ZooKeeper at " + description + " failed a release: " + code));
          }
        });
  }

  private CompletableFuture<ReleaseResult> releaseOnWorker(Key key, long fencingToken) {
    return onWorker(
        "release '" + key.lockName + "'",
        () ->
            withEntry(
                key,
                false,
                e -> e == null ? releaseForeign(key) : releaseOwn(key, e, fencingToken)));
  }

  private ReleaseResult releaseOwn(Key key, QueueEntry entry, long fencingToken) throws Exception {
    if (entry.node == null || entry.localHolds == 0) {
      return releaseForeign(key);
    }
    if (!entry.isGrant(fencingToken)) {
      // An owner id's earlier grant, which ended behind its holders' backs: the node tracked now
      // is a newer grant of the same owner id (another czxid), and only its own holds release it.
      log.debug(
          "Release of '{}' with fencing token {}: the owner's grant now is {}",
          key.lockName,
          fencingToken,
          entry.czxid);
      return ReleaseResult.NOT_HELD;
    }
    Integer left = changeHoldCount(entry, -1);
    ReleaseResult result;
    if (left == null) {
      result = ReleaseResult.NOT_HELD;
    } else if (left == 0) {
      result = ReleaseResult.RELEASED;
    } else {
      result = ReleaseResult.STILL_HELD;
    }
    entry.localHolds--;
    if (result != ReleaseResult.STILL_HELD || entry.localHolds <= 0) {
      // Holds counted through other clients (an owner id) keep the node; this client is done.
      removeEntry(key, entry);
    }
    return result;
  }

  /**
   * A release of holds this backend did not grant, or whose lease it already ended: nothing of this
   * client's is held, and holds other clients keep under the same owner id must not be touched.
   */
  private static ReleaseResult releaseForeign(Key key) {
    log.debug("Release of '{}' by an owner without holds through this client", key.lockName);
    return ReleaseResult.NOT_HELD;
  }

  /**
   * Changes the hold count on the server by {@code delta}, with a version check so that concurrent
   * holders of one owner id never lose an update; at zero the node is deleted.
   *
   * @return the new count, 0 if the node was deleted, or null if the node is gone
   */
  private @Nullable Integer changeHoldCount(QueueEntry entry, int delta) throws Exception {
    String node = Objects.requireNonNull(entry.node);
    for (int round = 0; round < MAX_ROUNDS * 4; round++) {
      ensureConnected();
      if (entry.version < 0) {
        Stat stat = new Stat();
        try {
          LockPaths.NodeData parsed =
              LockPaths.NodeData.parse(client.getData().storingStatIn(stat).forPath(node));
          entry.holdCount = parsed.holds();
          entry.description = parsed.description();
        } catch (KeeperException.NoNodeException e) {
          return null;
        }
        entry.version = stat.getVersion();
        entry.czxid = stat.getCzxid();
      }
      int next = entry.holdCount + delta;
      try {
        if (next <= 0) {
          entry.deleting = true;
          try {
            client.delete().withVersion(entry.version).forPath(node);
          } catch (Exception e) {
            entry.deleting = false;
            throw e;
          }
          entry.holdCount = 0;
          return 0;
        }
        Stat stat =
            client
                .setData()
                .withVersion(entry.version)
                .forPath(node, LockPaths.data(next, entry.description));
        entry.version = stat.getVersion();
        entry.holdCount = next;
        return next;
      } catch (KeeperException.BadVersionException e) {
        entry.version = -1; // another client of the same owner id changed it: read again
      } catch (KeeperException.NoNodeException e) {
        return null;
      }
    }
    throw new BackendUnavailableException(
        "The hold count of " + node + " kept changing; gave up after " + MAX_ROUNDS * 4 + " tries");
  }

  @Override
  public CompletableFuture<Void> abandon(String lockName, String owner) {
    wakeUps.abandoned(lockName, owner); // on the acquiring thread, as the core calls it
    return dropWait(lockName, owner);
  }

  /** Deletes the queue node of a wait that ended without a grant, in turn with the key's calls. */
  private CompletableFuture<Void> dropWait(String lockName, String owner) {
    Key key = new Key(lockName, owner);
    if (!entries.containsKey(key) && !tails.containsKey(key)) {
      return CompletableFuture.completedFuture(null); // nothing queued or pending for this owner
    }
    // The clean-up is queued behind this owner's earlier calls (so it sees their node) but not
    // waited for: an acquisition still stuck on a lost connection must not also delay the caller.
    // If the connection is down, it is retried once the same session is back.
    // When nothing is pending for the key, the delete is sent from this thread, before any later
    // request of this client: a new attempt of the same client never sees the abandoned node.
    submitAsync(key, "abandon wait for '" + lockName + "'", false, () -> leaveFast(key))
        .whenComplete(
            (v, failure) -> {
              if (failure != null) {
                log.debug("Abandon of '{}' deferred: {}", lockName, failure.toString());
                abandonAfterReconnect.add(key);
              }
            });
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Deletes a waiter's known node with one background request; an uncertain create (answer lost)
   * runs the blocking {@link #leave} on a worker to find the node it may have made.
   */
  private CompletableFuture<Void> leaveFast(Key key) {
    QueueEntry entry = entries.get(key);
    if (entry == null || entry.localHolds > 0) {
      return CompletableFuture.completedFuture(null);
    }
    String node = entry.node;
    if (entry.uncertain || entry.version < 0 || !client.getZookeeperClient().isConnected()) {
      return leaveOnWorker(key);
    }
    if (node == null) {
      removeEntry(key, entry);
      return CompletableFuture.completedFuture(null);
    }
    // Version-checked: once the node headed the queue, another client of the same owner id may
    // have joined it (counted its hold on it) before this waiter's own attempt; the delete then
    // fails and the waiter takes back only its own hold, on a worker.
    CompletableFuture<Void> deleted = new CompletableFuture<>();
    try {
      client
          .delete()
          .withVersion(entry.version)
          .inBackground(
              (c, event) -> {
                KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
                  removeEntry(key, entry);
                  deleted.complete(null);
                } else if (code == KeeperException.Code.BADVERSION) {
                  entry.version = -1;
                  leaveOnWorker(key)
                      .whenComplete(
                          (v, failure) -> {
                            if (failure == null) {
                              deleted.complete(null);
                            } else {
                              deleted.completeExceptionally(failure);
                            }
                          });
                } else {
                  deleted.completeExceptionally(
                      failed("abandon wait for '" + key.lockName + "'", code));
                }
              })
          .forPath(node);
    } catch (Exception e) {
      deleted.completeExceptionally(e);
    }
    return deleted;
  }

  private CompletableFuture<Void> leaveOnWorker(Key key) {
    return onWorker(
        "abandon wait for '" + key.lockName + "'", () -> withEntry(key, false, e -> leave(key, e)));
  }

  private @Nullable Void leave(Key key, @Nullable QueueEntry entry) throws Exception {
    if (entry == null || entry.localHolds > 0) {
      return null; // the owner holds the lock (an owner id re-entry gave up): keep it
    }
    String node = entry.node;
    if (node != null) {
      // The waiter's own hold only (see leaveFast): a version-checked decrement, deleting the
      // node at zero.
      changeHoldCount(entry, -1);
    }
    if (entry.uncertain) {
      entry.node = null;
      adoptOrDeleteOrphans(entry, paths.lockPath(key.lockName), LockPaths.ownerKey(key.owner));
      if (entry.node != null) {
        changeHoldCount(entry, -1); // the adopted node: as above, only this waiter's hold
      }
    }
    removeEntry(key, entry);
    return null;
  }

  private void deleteQuietly(String path) throws Exception {
    ensureConnected();
    try {
      client.delete().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      // already gone: that is what we wanted
    }
  }

  // ---- leases ---------------------------------------------------------------------------------

  /**
   * Checks, with all requests pipelined on the one connection (one round trip of latency), that
   * each holder's node still exists with its creation zxid; extends the lease of those that do.
   */
  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(notConnected());
    }
    long sentAt = System.nanoTime();
    Set<HeldLease> gone = ConcurrentHashMap.newKeySet();
    List<CompletableFuture<Void>> checks = new ArrayList<>();
    for (HeldLease lease : leases) {
      Key key = new Key(lease.lockName(), lease.owner());
      QueueEntry entry = entries.get(key);
      String node = entry == null ? null : entry.node;
      if (entry == null
          || node == null
          || entry.localHolds <= 0
          || !entry.isGrant(lease.fencingToken())) {
        // Not this lease's grant any more: an owner id may hold a newer grant of the lock now,
        // which this renewal must not extend (nor report as this lease's).
        gone.add(lease);
        continue;
      }
      // The server decides: the node must still be the one created for this lease's grant.
      long czxid = lease.fencingToken();
      CompletableFuture<Void> check = new CompletableFuture<>();
      checks.add(check);
      try {
        client
            .checkExists()
            .inBackground(
                (c, event) -> {
                  KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                  if (code == KeeperException.Code.OK
                      && event.getStat() != null
                      && event.getStat().getCzxid() == czxid) {
                    extendLease(key, entry, sentAt + lease.lease().toNanos());
                    check.complete(null);
                  } else if (code == KeeperException.Code.OK
                      || code == KeeperException.Code.NONODE) {
                    gone.add(lease);
                    check.complete(null);
                  } else {
                    check.completeExceptionally(
                        new BackendUnavailableException(
                            "ZooKeeper at " + description + " failed a renewal check: " + code));
                  }
                })
            .forPath(node);
      } catch (Exception e) {
        check.completeExceptionally(unavailable("renew", e));
      }
    }
    return CompletableFuture.allOf(checks.toArray(new CompletableFuture<?>[0]))
        .thenApply(v -> Set.copyOf(gone));
  }

  /**
   * Moves the end of the lease kept by this backend; when it passes without another extension, the
   * holder's node is deleted (see the class comment).
   */
  private void extendLease(Key key, QueueEntry entry, long until) {
    if (until - entry.leaseEndNanos > 0) {
      entry.leaseEndNanos = until;
    }
    if (entry.leaseMark == null) {
      scheduleLeaseEnd(key, entry);
    }
  }

  /**
   * Registers the entry's lease end with the one lease timer. An extension does not touch the
   * registration: when it comes due, {@link #leaseEnded} finds the later end and registers again.
   */
  private void scheduleLeaseEnd(Key key, QueueEntry entry) {
    LeaseMark mark =
        new LeaseMark(entry.leaseEndNanos - originNanos, leaseSeq.incrementAndGet(), key, entry);
    entry.leaseMark = mark;
    leaseMarks.add(mark);
    tickNoLaterThan(mark.at);
  }

  /**
   * Makes sure the lease timer runs no later than {@code at}. In the common case (leases of one
   * length, granted one after another) a timer run is already due earlier, so a grant neither
   * schedules a task nor wakes the timer thread.
   */
  private void tickNoLaterThan(long at) {
    tickLock.lock();
    try {
      ScheduledFuture<?> scheduled = nextTick;
      if (scheduled != null && nextTickAt - at <= 0) {
        return;
      }
      if (scheduled != null) {
        scheduled.cancel(false);
      }
      nextTickAt = at;
      long delay = Math.max(0, at - (System.nanoTime() - originNanos));
      nextTick = timer.schedule(this::tick, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      nextTick = null; // closing
    } finally {
      tickLock.unlock();
    }
  }

  /** Handles the lease marks that are due, and schedules the next run for the earliest other. */
  private void tick() {
    tickLock.lock();
    try {
      nextTick = null; // marks registered from now on schedule a run themselves
    } finally {
      tickLock.unlock();
    }
    long now = System.nanoTime() - originNanos;
    while (true) {
      LeaseMark first = leaseMarks.pollFirst();
      if (first == null) {
        return;
      }
      if (first.at - now > 0) {
        leaseMarks.add(first);
        tickNoLaterThan(first.at);
        return;
      }
      QueueEntry entry = first.entry;
      if (entry.leaseMark == first) {
        entry.leaseMark = null;
        leaseEnded(first.key, entry);
      }
    }
  }

  private void leaseEnded(Key key, QueueEntry entry) {
    if (entries.get(key) != entry) {
      return;
    }
    if (entry.leaseEndNanos - System.nanoTime() > 0) {
      scheduleLeaseEnd(key, entry); // renewed meanwhile
      return;
    }
    submit(
            key,
            "end lease of '" + key.lockName + "'",
            () ->
                withEntry(
                    key,
                    false,
                    e -> {
                      if (e != entry || e.leaseEndNanos - System.nanoTime() > 0) {
                        if (e == entry) {
                          scheduleLeaseEnd(key, e);
                        }
                        return null;
                      }
                      String node = e.node;
                      if (node != null && e.localHolds > 0) {
                        // Only this client's holds end: with an owner id shared by other clients
                        // whose leases go on, the node stays (their holds keep it).
                        log.debug("Lease of '{}' ended without renewal on {}", key.lockName, node);
                        changeHoldCount(e, -e.localHolds);
                      }
                      removeEntry(key, e);
                      return null;
                    }))
        .whenComplete(
            (v, failure) -> {
              if (failure != null && entries.get(key) == entry) {
                // Not connected: try again shortly; if the session dies, the node dies with it.
                entry.leaseMark = null;
                entry.leaseEndNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                scheduleLeaseEnd(key, entry);
              }
            });
  }

  // ---- inspection and administration ---------------------------------------------------------

  /**
   * Lists the holders of the locks whose names match the glob, from the queue heads under the root.
   * A {@code sync} first brings the member this client reads from up to date with the leader, so
   * the answer includes every grant made before the call. {@code heldSince} is the holder's wall
   * clock when it created its node: for a holder that waited, when it started waiting. {@code
   * leaseRemaining} is null: the lease is the holder's session, which the ensemble does not report
   * to other clients.
   */
  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    Objects.requireNonNull(namePattern, "namePattern");
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(notConnected());
    }
    java.util.regex.Pattern glob = glob(namePattern);
    String operation = "list locks matching '" + namePattern + "'";
    return syncAsync(paths.root())
        .thenCompose(v -> listAsync(paths.root()))
        .thenCompose(
            event -> {
              KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
              if (code == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(List.<LockInfo>of());
              }
              if (code != KeeperException.Code.OK) {
                return CompletableFuture.failedFuture(failed(operation, code));
              }
              List<CompletableFuture<java.util.Optional<Holder>>> holders = new ArrayList<>();
              for (String child : event.getChildren()) {
                String name = LockPaths.decode(child);
                if (name != null && glob.matcher(name).matches()) {
                  holders.add(holder(name, operation, 0));
                }
              }
              return CompletableFuture.allOf(holders.toArray(new CompletableFuture<?>[0]))
                  .thenApply(
                      v ->
                          holders.stream()
                              .map(CompletableFuture::join)
                              .flatMap(java.util.Optional::stream)
                              .map(Holder::info)
                              .sorted(java.util.Comparator.comparing(LockInfo::name))
                              .toList());
            })
        .handle(
            (infos, failure) -> {
              if (failure != null) {
                throw new java.util.concurrent.CompletionException(failure(operation, failure));
              }
              return infos;
            });
  }

  /**
   * Deletes the node at the head of the lock's queue, whoever holds it: its holder finds out at its
   * next renewal ({@code TAKEN_OVER}), and the next waiter's predecessor watch fires. The delete is
   * version-checked against the data just read, so the answer describes exactly what was deleted.
   */
  @Override
  public CompletableFuture<java.util.Optional<LockInfo>> forceRelease(String lockName) {
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(notConnected());
    }
    return syncAsync(paths.root())
        .thenCompose(v -> forceRelease(lockName, "force the release of '" + lockName + "'", 0))
        .handle(
            (info, failure) -> {
              if (failure != null) {
                throw new java.util.concurrent.CompletionException(
                    failure("force the release of '" + lockName + "'", failure));
              }
              return info;
            });
  }

  private CompletableFuture<java.util.Optional<LockInfo>> forceRelease(
      String lockName, String operation, int round) {
    if (round >= MAX_ROUNDS) {
      return CompletableFuture.failedFuture(
          new BackendUnavailableException(
              "The holder of '" + lockName + "' kept changing; gave up after " + round + " tries"));
    }
    return holder(lockName, operation, 0)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return CompletableFuture.completedFuture(java.util.Optional.<LockInfo>empty());
              }
              Holder holder = found.get();
              CompletableFuture<CuratorEvent> deleted = new CompletableFuture<>();
              try {
                client
                    .delete()
                    .withVersion(holder.version)
                    .inBackground((c, event) -> deleted.complete(event))
                    .forPath(holder.path);
              } catch (Exception e) {
                deleted.completeExceptionally(e);
              }
              return deleted.thenCompose(
                  event -> {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    if (code == KeeperException.Code.OK) {
                      log.warn(
                          "Forced the release of '{}' held by {} (fencing token {})",
                          lockName,
                          holder.info.holder(),
                          holder.info.fencingToken());
                      return CompletableFuture.completedFuture(java.util.Optional.of(holder.info));
                    }
                    if (code == KeeperException.Code.NONODE
                        || code == KeeperException.Code.BADVERSION) {
                      return forceRelease(lockName, operation, round + 1); // changed meanwhile
                    }
                    return CompletableFuture.failedFuture(failed(operation, code));
                  });
            });
  }

  /** The head of a lock's queue with its data, read in the background; empty if not held. */
  private CompletableFuture<java.util.Optional<Holder>> holder(
      String lockName, String operation, int round) {
    String parent = paths.lockPath(lockName);
    return listAsync(parent)
        .thenCompose(
            listing -> {
              KeeperException.Code code = KeeperException.Code.get(listing.getResultCode());
              if (code == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(java.util.Optional.<Holder>empty());
              }
              if (code != KeeperException.Code.OK) {
                return CompletableFuture.failedFuture(failed(operation, code));
              }
              List<String> queue = LockPaths.queueOrder(listing.getChildren());
              if (queue.isEmpty()) {
                return CompletableFuture.completedFuture(java.util.Optional.<Holder>empty());
              }
              String head = parent + "/" + queue.get(0);
              CompletableFuture<CuratorEvent> read = new CompletableFuture<>();
              try {
                client.getData().inBackground((c, event) -> read.complete(event)).forPath(head);
              } catch (Exception e) {
                read.completeExceptionally(e);
              }
              return read.thenCompose(
                  data -> {
                    KeeperException.Code dataCode = KeeperException.Code.get(data.getResultCode());
                    if (dataCode == KeeperException.Code.NONODE && round + 1 < MAX_ROUNDS) {
                      return holder(lockName, operation, round + 1); // released meanwhile
                    }
                    if (dataCode != KeeperException.Code.OK || data.getStat() == null) {
                      return CompletableFuture.failedFuture(failed(operation, dataCode));
                    }
                    Stat stat = data.getStat();
                    LockPaths.NodeData parsed = LockPaths.NodeData.parse(data.getData());
                    LockInfo info =
                        new LockInfo(
                            lockName,
                            parsed.holder(),
                            stat.getCzxid(),
                            parsed.holds(),
                            parsed.epochMillis() < 0
                                ? null
                                : java.time.Instant.ofEpochMilli(parsed.epochMillis()),
                            null);
                    return CompletableFuture.completedFuture(
                        java.util.Optional.of(new Holder(head, stat.getVersion(), info)));
                  });
            });
  }

  /** A glob ({@code *} any characters, {@code ?} one, everything else literal) as a pattern. */
  static java.util.regex.Pattern glob(String glob) {
    StringBuilder regex = new StringBuilder(glob.length() + 8);
    StringBuilder literal = new StringBuilder();
    for (int i = 0; i < glob.length(); i++) {
      char c = glob.charAt(i);
      if (c == '*' || c == '?') {
        if (literal.length() > 0) {
          regex.append(java.util.regex.Pattern.quote(literal.toString()));
          literal.setLength(0);
        }
        regex.append(c == '*' ? ".*" : ".");
      } else {
        literal.append(c);
      }
    }
    if (literal.length() > 0) {
      regex.append(java.util.regex.Pattern.quote(literal.toString()));
    }
    return java.util.regex.Pattern.compile(regex.toString(), java.util.regex.Pattern.DOTALL);
  }

  private BackendUnavailableException failed(String operation, KeeperException.Code code) {
    return new BackendUnavailableException(
        "ZooKeeper at " + description + " failed '" + operation + "': " + code);
  }

  /** The head node of a lock's queue: its path, data version and what it says. */
  private record Holder(String path, int version, LockInfo info) {}

  // ---- release signals and session events -----------------------------------------------------

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
    // The watches themselves are set by tryAcquire, on each waiter's predecessor; the core
    // re-attempts once this completes, so a watch that fired before now is not lost.
    listeners.put(lockName, listener);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void unwatchReleases(String lockName) {
    listeners.remove(lockName);
  }

  @Override
  public void bindEvents(BackendEvents events) {
    this.events = events;
  }

  /**
   * Applies a connection change, then lets the calls waiting for a connection go (the gate opens
   * only after the change is applied, so no call runs against a session that already ended), and
   * wakes waiters whose watches a session change killed. Package-private so that tests can apply a
   * change at a chosen moment of a call.
   */
  void onConnectionState(CuratorFramework c, ConnectionState state) {
    BackendEvents sink = events;
    switch (state) {
      case CONNECTED:
        sessionId = currentSessionId();
        lossApplied = false;
        gate.open();
        takeBackLeftHolds();
        break;
      case SUSPENDED:
        gate.close();
        if (sink != null) {
          sink.connectionSuspended("ZooKeeper connection to " + description + " suspended");
        }
        break;
      case RECONNECTED:
        long now = currentSessionId();
        if (now != sessionId) {
          sessionId = now;
          String detail = "reconnected with a new session: the old one expired";
          if (!lossApplied) {
            // No LOST came first (Curator does not always report one): the change is a loss.
            sessionLost(detail, sink);
          }
          lossApplied = false;
          if (sink != null) {
            // The connection is back: grants made in the new session must not start uncertain
            // because of the suspension that preceded the loss (the lost ones stay lost).
            sink.connectionRestored();
          }
          gate.open();
          takeBackLeftHolds();
          wakeUps.wakeAll(listeners, detail);
        } else {
          lossApplied = false;
          for (Key key : List.copyOf(abandonAfterReconnect)) {
            abandonAfterReconnect.remove(key);
            dropWait(key.lockName, key.owner);
          }
          if (sink != null) {
            sink.connectionRestored();
          }
          gate.open();
        }
        break;
      case LOST:
        gate.close(); // until the new session's RECONNECTED is applied
        String detail =
            "ZooKeeper session lost (expired, or no connection within the session timeout)";
        sessionLost(detail, sink);
        lossApplied = true;
        // The waiters' watches died with the session: wake them now. Their new attempts wait at
        // the gate for the new session (within the caller's bound).
        wakeUps.wakeAll(listeners, detail);
        break;
      default:
        break;
    }
  }

  /** Takes back, in the background, the holds of a lost session on other sessions' nodes. */
  private void takeBackLeftHolds() {
    for (TakeBack takeBack : List.copyOf(takeBackAfterReconnect)) {
      takeBackAfterReconnect.remove(takeBack);
      onWorker(
              "take back holds on " + takeBack.path(),
              () -> {
                takeBackQuietly(takeBack.path(), takeBack.czxid(), takeBack.holds());
                return null;
              })
          .whenComplete(
              (v, failure) -> {
                if (failure != null) {
                  log.warn(
                      "Could not take back holds on {}: {}", takeBack.path(), failure.toString());
                }
              });
    }
  }

  /** Holds of this client on a node of another session, to take back (see sessionLost). */
  private record TakeBack(String path, long czxid, int holds) {}

  private void sessionLost(String detail, @Nullable BackendEvents sink) {
    abandonAfterReconnect.clear();
    // The old session's ephemeral nodes are gone (or about to be): forget them all. A node that
    // a create retried by Curator made in the *new* session is alive, though, and every lease is
    // about to be reported lost, so nobody would ever delete it: delete it now.
    long current = currentSessionId();
    // Detaching an entry is atomic with an owner's call tracking a node in it (QueueEntry.track):
    // either the node is tracked first and deleted here, or the call finds the entry detached
    // and deletes the node itself. Otherwise a node tracked just after this loop read the entry
    // would be held by nobody: the core, told of the loss, would release the grant and find
    // nothing to release.
    for (Map.Entry<Key, QueueEntry> e : entries.entrySet()) {
      QueueEntry entry = e.getValue();
      String shared = entry.node;
      int holds = entry.localHolds;
      if (entry.sharedWatch != null && shared != null && holds > 0) {
        takeBackAfterReconnect.add(new TakeBack(shared, entry.czxid, holds));
      }
      String node = entry.detach(current);
      if (node != null) {
        deleteInBackground(node);
      }
      removeEntry(e.getKey(), entry);
    }
    if (sink != null) {
      sink.sessionLost(detail);
    }
  }

  private long currentSessionId() {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    client.getConnectionStateListenable().removeListener(connectionListener);
    gate.shutdown();
    timer.shutdownNow();
    workers.shutdown();
    try {
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdownNow();
    if (ownsClient) {
      client.close();
    }
  }

  /** For tests: {@code hook} runs with a created node's path just before it is tracked. */
  void beforeTracking(java.util.function.@Nullable Consumer<String> hook) {
    this.beforeTracking = hook;
  }

  /** For tests: {@code hook} runs with the joined node's path between the read and the write. */
  void beforeJoinWrite(java.util.function.@Nullable Consumer<String> hook) {
    this.beforeJoinWrite = hook;
  }

  private void runBeforeJoinWrite(String path) {
    java.util.function.Consumer<String> hook = beforeJoinWrite;
    if (hook != null) {
      hook.accept(path);
    }
  }

  private void runBeforeTracking(String path) {
    java.util.function.Consumer<String> hook = beforeTracking;
    if (hook != null) {
      hook.accept(path);
    }
  }

  // ---- plumbing -------------------------------------------------------------------------------

  private List<String> children(String parent) throws Exception {
    ensureConnected();
    try {
      return LockPaths.queueOrder(client.getChildren().forPath(parent));
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }

  private void ensureConnected() {
    if (!client.getZookeeperClient().isConnected()) {
      throw notConnected();
    }
  }

  private BackendUnavailableException notConnected() {
    return new BackendUnavailableException("Not connected to ZooKeeper at " + description);
  }

  private BackendUnavailableException unavailable(String operation, Throwable e) {
    if (e instanceof BackendUnavailableException b) {
      return b;
    }
    return new BackendUnavailableException(
        "ZooKeeper at " + description + " failed '" + operation + "': " + e, e);
  }

  @FunctionalInterface
  private interface EntryCall<T> {
    T call(@Nullable QueueEntry entry) throws Exception;
  }

  @FunctionalInterface
  private interface Call<T> {
    T call() throws Exception;
  }

  @FunctionalInterface
  private interface AsyncCall<T> {
    CompletableFuture<T> start();
  }

  /**
   * Runs {@code call} with the entry of {@code key} (created if {@code create}). Only called from
   * tasks that {@link #submit} runs one at a time per key, so no lock is needed here.
   */
  private <T> T withEntry(Key key, boolean create, EntryCall<T> call) throws Exception {
    QueueEntry entry =
        create ? entries.computeIfAbsent(key, k -> new QueueEntry()) : entries.get(key);
    if (entry == null) {
      return call.call(null);
    }
    T result = call.call(entry);
    if (entry.node == null && entry.localHolds <= 0 && !entry.uncertain) {
      removeEntry(key, entry);
    }
    return result;
  }

  private void removeEntry(Key key, QueueEntry entry) {
    entry.detach(0);
    entries.remove(key, entry);
    LeaseMark mark = entry.leaseMark;
    if (mark != null) {
      leaseMarks.remove(mark);
      entry.leaseMark = null;
    }
    PredecessorWatch watch = entry.watch;
    Watcher watcher = watch == null || watch.fired ? null : watch.watcher;
    if (watch != null && watcher != null && client.getZookeeperClient().isConnected()) {
      String watched = watch.path;
      // Remove the predecessor watch so that an abandoned waiter costs no later notification.
      try {
        client
            .watchers()
            .remove(watcher)
            .ofType(Watcher.WatcherType.Data)
            .quietly()
            .inBackground()
            .forPath(watched);
      } catch (Exception e) {
        log.debug("Could not remove the watch on {}: {}", watched, e.toString());
      }
    }
    entry.watch = null;
    SharedNodeWatch shared = entry.sharedWatch;
    entry.sharedWatch = null;
    if (shared != null) {
      removeSharedWatch(shared);
    }
  }

  /**
   * Runs the blocking {@code call} on a worker thread, after every earlier call for the same key
   * has finished, in the order of the calls. So an abandon or release issued after an acquisition
   * (which the core may have given up waiting for) always sees that acquisition's queue node: none
   * is orphaned.
   */
  private <T> CompletableFuture<T> submit(Key key, String operation, Call<T> call) {
    return submit(key, operation, true, call);
  }

  /**
   * As {@link #submit(Key, String, Call)}; with {@code whenConnected}, waits for a connection (see
   * {@link ConnectionGate}) before it starts.
   */
  private <T> CompletableFuture<T> submit(
      Key key, String operation, boolean whenConnected, Call<T> call) {
    return submitAsync(key, operation, whenConnected, () -> onWorker(operation, call));
  }

  /**
   * Starts {@code call} once every earlier call for the same key has finished (at once, on the
   * calling thread, if none is pending), and counts it finished when its future completes. {@code
   * call} must not block: it sends requests in the background or hands blocking work to {@link
   * #onWorker}.
   *
   * @param whenConnected wait, in turn, for a connection before starting, bounded by the connection
   *     timeout: a connecting client is not an unreachable one, and the core bounds the caller's
   *     wait. The call keeps its place in the key's order meanwhile, so a later abandon or release
   *     of the same owner still runs after it.
   */
  private <T> CompletableFuture<T> submitAsync(
      Key key, String operation, boolean whenConnected, AsyncCall<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    if (closed.get()) {
      result.completeExceptionally(new IllegalStateException("The ZooKeeper backend is closed"));
      return result;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    java.util.function.Consumer<@Nullable Throwable> finish =
        failure -> {
          if (failure != null) {
            result.completeExceptionally(failure(operation, failure));
          }
          tails.remove(key, done);
          done.complete(null);
        };
    Runnable run =
        () -> {
          CompletableFuture<T> running;
          try {
            running = call.start();
          } catch (RuntimeException e) {
            running = CompletableFuture.failedFuture(e);
          }
          running.whenComplete(
              (value, failure) -> {
                if (failure == null) {
                  result.complete(value);
                }
                finish.accept(failure);
              });
        };
    Runnable start =
        whenConnected
            ? () ->
                gate.whenOpen()
                    .whenComplete(
                        (open, failure) -> {
                          if (failure == null) {
                            run.run();
                          } else {
                            finish.accept(failure);
                          }
                        })
            : run;
    @SuppressWarnings("unchecked")
    CompletableFuture<Void>[] previous = new CompletableFuture[1];
    tails.compute(
        key,
        (k, tail) -> {
          previous[0] = tail;
          return done;
        });
    if (previous[0] == null) {
      start.run();
    } else {
      previous[0].whenComplete((v, e) -> start.run());
    }
    return result;
  }

  /** Runs the blocking {@code call} on a worker thread. */
  private <T> CompletableFuture<T> onWorker(String operation, Call<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      workers.execute(
          () -> {
            try {
              result.complete(call.call());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              result.completeExceptionally(unavailable(operation, e));
            } catch (Exception e) {
              result.completeExceptionally(unavailable(operation, e));
            }
          });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new IllegalStateException("The ZooKeeper backend is closed", e));
    }
    return result;
  }

  /** What a call's future fails with: the backend's own exceptions as they are, others mapped. */
  private Throwable failure(String operation, Throwable failure) {
    Throwable cause = Failures.unwrap(failure);
    if (cause instanceof BackendUnavailableException || cause instanceof IllegalStateException) {
      return cause;
    }
    return unavailable(operation, cause);
  }

  /**
   * Brings the member this client talks to up to date with the leader, so that the reads sent after
   * it see every write committed before it (ZooKeeper's {@code sync}).
   */
  private CompletableFuture<Void> syncAsync(String path) {
    CompletableFuture<Void> answer = new CompletableFuture<>();
    try {
      client
          .sync()
          .inBackground(
              (c, event) -> {
                KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
                  answer.complete(null);
                } else {
                  answer.completeExceptionally(failed("sync " + path, code));
                }
              })
          .forPath(path);
    } catch (Exception e) {
      answer.completeExceptionally(unavailable("sync " + path, e));
    }
    return answer;
  }

  /**
   * The children of {@code path}, requested in the background: completes with the answer whatever
   * its result code, exceptionally only if the request could not be sent.
   */
  private CompletableFuture<CuratorEvent> listAsync(String path) {
    CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
    try {
      client.getChildren().inBackground((c, event) -> answer.complete(event)).forPath(path);
    } catch (Exception e) {
      answer.completeExceptionally(unavailable("list " + path, e));
    }
    return answer;
  }

  private static ThreadFactory daemonThreads(String name) {
    AtomicInteger n = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, name + "-" + n.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /** One lock name and owner token. */
  private record Key(String lockName, String owner) {}

  /**
   * A lease end registered with the lease timer, ordered by {@code at} (nanoseconds since the
   * backend's origin, so plain comparison is safe) and then by registration.
   */
  private record LeaseMark(long at, long seq, Key key, QueueEntry entry)
      implements Comparable<LeaseMark> {
    @Override
    public int compareTo(LeaseMark other) {
      int byTime = Long.compare(at, other.at);
      return byTime != 0 ? byTime : Long.compare(seq, other.seq);
    }
  }

  /** A listing of the queue requested after {@code node} was created. */
  private record Prefetch(String node, CompletableFuture<CuratorEvent> children) {}

  /**
   * A watch on a waiter's predecessor. ZooKeeper notifies a watch once: after that ({@code fired})
   * it no longer stands for a signal to come, whatever a listing says of its node.
   */
  private static final class PredecessorWatch {
    final String path;
    @Nullable Watcher watcher; // set once, before the watch is registered
    volatile boolean fired;

    PredecessorWatch(String path) {
      this.path = path;
    }
  }

  /**
   * What this backend knows of one owner's queue node for one lock. Fields are changed by that
   * owner's calls, which run one at a time per key; the watcher, the lease timer and renewal read
   * the volatile ones.
   */
  private static final class QueueEntry {
    volatile @Nullable String node;

    /** The session that owns {@link #node} (its ephemeral owner), 0 while unknown. */
    volatile long nodeSession;

    /**
     * Dropped from the entries (its session ended, or it was released or abandoned): a node created
     * for it afterwards is tracked by nobody. Set by {@link #detach}, read by {@link #track} and
     * {@link #adopt}, under this entry's monitor.
     */
    private boolean removed;

    long czxid;
    int version;
    int holdCount;

    /** The node's data after the hold count: grant time and holder description. */
    String description = "";

    /** A create was sent whose answer was lost: a node of ours may exist unknown to us. */
    volatile boolean uncertain;

    /** The queue as requested when the predecessor's watch fired, for the next attempt. */
    volatile @Nullable Prefetch prefetch;

    /** Grants made through this backend and not yet released. */
    volatile int localHolds;

    volatile long leaseEndNanos;

    /** This entry's registration with the lease timer, or null. */
    volatile @Nullable LeaseMark leaseMark;

    /** The watch on the predecessor set last, fired or not; null if none. */
    volatile @Nullable PredecessorWatch watch;

    /** The watch on a node of this owner id that another session created (see joinHold). */
    volatile @Nullable SharedNodeWatch sharedWatch;

    /**
     * This client is deleting the node (its last hold): its deletion is then no loss to report. Set
     * before the delete is sent, because ZooKeeper tells the watch before it answers the delete.
     */
    volatile boolean deleting;

    /**
     * Whether {@link #node} is the grant with this fencing token (its {@code czxid}). One owner id
     * can be granted a lock again after its earlier grant ended behind its holders' backs; the node
     * then changes, and so does the token, while the owner stays the same.
     */
    boolean isGrant(long fencingToken) {
      return czxid == fencingToken;
    }

    /*
     * Why a monitor: an owner's calls run one at a time per key, but the session-loss handling
     * (on Curator's connection-state thread) detaches every entry at any moment. Checking that
     * the entry is still attached and recording a new node must be one step against it, or a
     * node recorded just after the session loss looked at the entry is tracked by nobody and
     * blocks the lock for as long as its session lives. Only fields change under the monitor; the
     * requests (deleting a node) are made by the callers, outside it.
     */

    /**
     * Records the node a create just made (hold count 1), unless the entry was detached.
     *
     * @return false if detached: the caller must delete {@code path}, which nobody else will
     */
    synchronized boolean track(String path, Stat stat, String description) {
      if (removed) {
        return false;
      }
      node = path;
      nodeSession = stat.getEphemeralOwner();
      czxid = stat.getCzxid();
      version = stat.getVersion();
      holdCount = 1;
      this.description = description;
      uncertain = false;
      return true;
    }

    /**
     * Records a node of this owner found after a create whose answer was lost; its data is read
     * before it is changed ({@code version} -1).
     *
     * @return false if detached: the caller must delete {@code path}
     */
    synchronized boolean adopt(String path, Stat stat) {
      if (removed) {
        return false;
      }
      node = path;
      nodeSession = stat.getEphemeralOwner();
      czxid = stat.getCzxid();
      version = -1;
      holdCount = 1;
      return true;
    }

    /**
     * Records the node of another client of the same owner id, after a write that counted this
     * client's hold on it succeeded ({@code written} is that write's answer), unless the entry was
     * detached.
     *
     * @return false if detached: the caller must take its hold back
     */
    synchronized boolean join(String path, Stat written, int holds, String description) {
      if (removed) {
        return false;
      }
      node = path;
      nodeSession = written.getEphemeralOwner();
      czxid = written.getCzxid();
      version = written.getVersion();
      holdCount = holds;
      this.description = description;
      prefetch = null;
      return true;
    }

    /**
     * Detaches the entry: nothing is tracked in it from now on.
     *
     * @param currentSession the session now current, or 0
     * @return the node tracked, if it belongs to {@code currentSession} (alive, and for the caller
     *     to delete), else null
     */
    synchronized @Nullable String detach(long currentSession) {
      removed = true;
      String tracked = node;
      return tracked != null && currentSession != 0 && nodeSession == currentSession
          ? tracked
          : null;
    }

    void forgetNode() {
      deleting = false;
      node = null;
      nodeSession = 0;
      prefetch = null;
      localHolds = 0;
      watch = null;
    }
  }
}
