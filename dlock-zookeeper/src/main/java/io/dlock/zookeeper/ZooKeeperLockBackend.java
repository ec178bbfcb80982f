package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
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
 * <p><b>Failures.</b> Every call fails fast with {@link BackendUnavailableException} while the
 * client is not connected, and Curator retries a call at most three times within the connection
 * timeout.
 */
public final class ZooKeeperLockBackend implements LockBackend {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
  private static final AtomicInteger IDS = new AtomicInteger();
  private static final int MAX_ROUNDS = 8;

  private final CuratorFramework client;
  private final boolean ownsClient;
  private final LockPaths paths;
  private final String description;
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final ConcurrentHashMap<Key, QueueEntry> entries = new ConcurrentHashMap<>();

  /** Waits whose clean-up failed for want of a connection: retried on reconnection. */
  private final Set<Key> abandonAfterReconnect = ConcurrentHashMap.newKeySet();

  /** The last pending call per key: calls of one owner on one lock run one after another. */
  private final ConcurrentHashMap<Key, CompletableFuture<Void>> tails = new ConcurrentHashMap<>();

  private final ConcurrentHashMap<String, ReleaseListener> listeners = new ConcurrentHashMap<>();
  private final AtomicLong watchNotifications = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ConnectionStateListener connectionListener = this::onConnectionState;
  private volatile @Nullable BackendEvents events;
  private volatile long sessionId;

  private ZooKeeperLockBackend(CuratorFramework client, boolean ownsClient, String rootPath) {
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
    this.sessionId = currentSessionId();
    client.getConnectionStateListenable().addListener(connectionListener);
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
    return new ZooKeeperLockBackend(client, true, settings.rootPath());
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
        client, false, ZooKeeperLockSettings.requireValidRootPath(rootPath));
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
    return submit(
        key,
        "acquire '" + lockName + "'",
        () -> withEntry(key, true, entry -> acquire(key, entry, lease.toNanos())));
  }

  private AcquireResult acquire(Key key, QueueEntry entry, long leaseNanos) throws Exception {
    String parent = paths.lockPath(key.lockName);
    String ownerKey = LockPaths.ownerKey(key.owner);
    for (int round = 0; round < MAX_ROUNDS; round++) {
      String node = entry.node;
      if (node != null && entry.localHolds > 0) {
        // The same owner again (an owner id): count the hold on the server.
        if (changeHoldCount(entry, +1) == null) {
          entry.forgetNode();
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
          create(entry, key);
        }
        node = Objects.requireNonNull(entry.node);
      }
      List<String> queue = children(parent);
      String mine = node.substring(node.lastIndexOf('/') + 1);
      int position = queue.indexOf(mine);
      if (position < 0) {
        // Our node is gone (deleted behind our back, or its session ended): queue again.
        entry.forgetNode();
        continue;
      }
      if (position == 0) {
        entry.localHolds = 1;
        extendLease(key, entry, System.nanoTime() + leaseNanos);
        return new AcquireResult.Granted(entry.czxid, entry.holdCount);
      }
      String head = queue.get(0);
      if (ownerKey.equals(LockPaths.ownerKeyOf(head))) {
        // The same owner id holds the lock through another client: join its hold.
        AcquireResult joined = joinHold(key, entry, parent + "/" + head, leaseNanos);
        if (joined != null) {
          return joined;
        }
        continue;
      }
      String predecessor = parent + "/" + queue.get(position - 1);
      if (predecessor.equals(entry.watched)) {
        return new AcquireResult.Held(null);
      }
      if (watch(key, entry, predecessor)) {
        return new AcquireResult.Held(null);
      }
      // The predecessor left between the listing and the watch: look again.
    }
    // The queue kept changing under us; the core retries on the next signal.
    return new AcquireResult.Held(null);
  }

  private void create(QueueEntry entry, Key key) throws Exception {
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
                paths.nodePrefix(key.lockName, LockPaths.ownerKey(key.owner)), LockPaths.data(1));
    entry.node = path;
    entry.czxid = stat.getCzxid();
    entry.version = stat.getVersion();
    entry.holdCount = 1;
    entry.uncertain = false;
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
      if (entry.node == null) {
        entry.node = path;
        entry.czxid = stat.getCzxid();
        entry.version = stat.getVersion();
        entry.holdCount = 1;
      } else {
        deleteQuietly(path);
      }
    }
    entry.uncertain = false;
  }

  private @Nullable AcquireResult joinHold(
      Key key, QueueEntry entry, String headPath, long leaseNanos) throws Exception {
    Stat stat = new Stat();
    byte[] data;
    try {
      data = client.getData().storingStatIn(stat).forPath(headPath);
    } catch (KeeperException.NoNodeException e) {
      return null;
    }
    String ownNode = entry.node;
    entry.node = headPath;
    entry.czxid = stat.getCzxid();
    entry.version = stat.getVersion();
    entry.holdCount = LockPaths.holdCount(data);
    if (changeHoldCount(entry, +1) == null) {
      entry.node = ownNode;
      return null;
    }
    if (ownNode != null && !ownNode.equals(headPath)) {
      deleteQuietly(ownNode);
    }
    entry.localHolds = 1;
    extendLease(key, entry, System.nanoTime() + leaseNanos);
    return new AcquireResult.Granted(entry.czxid, entry.holdCount);
  }

  /**
   * Sets a watch on {@code predecessor}.
   *
   * @return false if it is already gone (no watch is left behind then)
   */
  private boolean watch(Key key, QueueEntry entry, String predecessor) throws Exception {
    ensureConnected();
    Watcher watcher = event -> onPredecessorEvent(key, predecessor, event);
    try {
      // getData, not exists: on a missing node exists would leave a watch for its creation.
      client.getData().usingWatcher(watcher).forPath(predecessor);
    } catch (KeeperException.NoNodeException e) {
      return false;
    }
    entry.watched = predecessor;
    entry.watcher = watcher;
    return true;
  }

  private void onPredecessorEvent(Key key, String predecessor, WatchedEvent event) {
    if (event.getType() == Watcher.Event.EventType.None) {
      return; // connection-state change: the watch stays registered and is re-set on reconnect
    }
    watchNotifications.incrementAndGet();
    QueueEntry entry = entries.get(key);
    if (entry != null && predecessor.equals(entry.watched)) {
      entry.watched = null;
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
  public CompletableFuture<ReleaseResult> release(String lockName, String owner) {
    Key key = new Key(lockName, owner);
    return submit(
        key,
        "release '" + lockName + "'",
        () -> withEntry(key, false, e -> e == null ? releaseForeign(key) : releaseOwn(key, e)));
  }

  private ReleaseResult releaseOwn(Key key, QueueEntry entry) throws Exception {
    if (entry.node == null || entry.localHolds == 0) {
      return releaseForeign(key);
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
          entry.holdCount = LockPaths.holdCount(client.getData().storingStatIn(stat).forPath(node));
        } catch (KeeperException.NoNodeException e) {
          return null;
        }
        entry.version = stat.getVersion();
        entry.czxid = stat.getCzxid();
      }
      int next = entry.holdCount + delta;
      try {
        if (next <= 0) {
          client.delete().withVersion(entry.version).forPath(node);
          entry.holdCount = 0;
          return 0;
        }
        Stat stat = client.setData().withVersion(entry.version).forPath(node, LockPaths.data(next));
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
    Key key = new Key(lockName, owner);
    if (!entries.containsKey(key) && !tails.containsKey(key)) {
      return CompletableFuture.completedFuture(null); // nothing queued or pending for this owner
    }
    // The clean-up is queued behind this owner's earlier calls (so it sees their node) but not
    // waited for: an acquisition still stuck on a lost connection must not also delay the caller.
    // If the connection is down, it is retried once the same session is back.
    submit(
            key,
            "abandon wait for '" + lockName + "'",
            false,
            () -> withEntry(key, false, e -> leave(key, e)))
        .whenComplete(
            (v, failure) -> {
              if (failure != null) {
                log.debug("Abandon of '{}' deferred: {}", lockName, failure.toString());
                abandonAfterReconnect.add(key);
              }
            });
    return CompletableFuture.completedFuture(null);
  }

  private @Nullable Void leave(Key key, @Nullable QueueEntry entry) throws Exception {
    if (entry == null || entry.localHolds > 0) {
      return null; // the owner holds the lock (an owner id re-entry gave up): keep it
    }
    String node = entry.node;
    if (node != null) {
      deleteQuietly(node);
    }
    if (entry.uncertain) {
      entry.node = null;
      adoptOrDeleteOrphans(entry, paths.lockPath(key.lockName), LockPaths.ownerKey(key.owner));
      String adopted = entry.node;
      if (adopted != null) {
        deleteQuietly(adopted);
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
      if (entry == null || node == null || entry.localHolds <= 0) {
        gone.add(lease);
        continue;
      }
      long czxid = entry.czxid;
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
    if (entry.leaseTimer == null) {
      scheduleLeaseEnd(key, entry);
    }
  }

  private void scheduleLeaseEnd(Key key, QueueEntry entry) {
    long delay = Math.max(0, entry.leaseEndNanos - System.nanoTime());
    try {
      entry.leaseTimer = timer.schedule(() -> leaseEnded(key, entry), delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      entry.leaseTimer = null; // closing
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
                entry.leaseTimer = null;
                entry.leaseEndNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                scheduleLeaseEnd(key, entry);
              }
            });
  }

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

  private void onConnectionState(CuratorFramework c, ConnectionState state) {
    BackendEvents sink = events;
    switch (state) {
      case CONNECTED:
        sessionId = currentSessionId();
        break;
      case SUSPENDED:
        if (sink != null) {
          sink.connectionSuspended("ZooKeeper connection to " + description + " suspended");
        }
        break;
      case RECONNECTED:
        long now = currentSessionId();
        if (now != sessionId) {
          sessionId = now;
          sessionLost("reconnected with a new session: the old one expired", sink);
        } else {
          for (Key key : List.copyOf(abandonAfterReconnect)) {
            abandonAfterReconnect.remove(key);
            abandon(key.lockName, key.owner);
          }
          if (sink != null) {
            sink.connectionRestored();
          }
        }
        break;
      case LOST:
        sessionLost(
            "ZooKeeper session lost (expired, or no connection within the session timeout)", sink);
        break;
      default:
        break;
    }
  }

  private void sessionLost(String detail, @Nullable BackendEvents sink) {
    abandonAfterReconnect.clear();
    // The session's ephemeral nodes are gone (or about to be): forget them all.
    for (Map.Entry<Key, QueueEntry> e : entries.entrySet()) {
      removeEntry(e.getKey(), e.getValue());
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
    entries.remove(key, entry);
    ScheduledFuture<?> t = entry.leaseTimer;
    if (t != null) {
      t.cancel(false);
    }
    Watcher watcher = entry.watcher;
    String watched = entry.watched;
    if (watcher != null && watched != null && client.getZookeeperClient().isConnected()) {
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
    entry.watched = null;
    entry.watcher = null;
  }

  /**
   * Runs {@code call} on a worker thread, after every earlier call for the same key has finished,
   * in the order of the calls. So an abandon or release issued after an acquisition (which the core
   * may have given up waiting for) always sees that acquisition's queue node: none is orphaned.
   */
  private <T> CompletableFuture<T> submit(Key key, String operation, Call<T> call) {
    return submit(key, operation, true, call);
  }

  /**
   * As {@link #submit(Key, String, Call)}; with {@code failFast}, fails at once while the client is
   * not connected instead of queueing.
   */
  private <T> CompletableFuture<T> submit(
      Key key, String operation, boolean failFast, Call<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    if (closed.get()) {
      result.completeExceptionally(new IllegalStateException("The ZooKeeper backend is closed"));
      return result;
    }
    if (failFast && !client.getZookeeperClient().isConnected()) {
      result.completeExceptionally(notConnected()); // fail fast: the core retries or gives up
      return result;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    Runnable task =
        () -> {
          try {
            result.complete(call.call());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result.completeExceptionally(unavailable(operation, e));
          } catch (Exception e) {
            result.completeExceptionally(unavailable(operation, e));
          } finally {
            tails.remove(key, done);
            done.complete(null);
          }
        };
    Runnable start =
        () -> {
          try {
            workers.execute(task);
          } catch (RejectedExecutionException e) {
            result.completeExceptionally(
                new IllegalStateException("The ZooKeeper backend is closed", e));
            tails.remove(key, done);
            done.complete(null);
          }
        };
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
   * What this backend knows of one owner's queue node for one lock. Fields are changed by that
   * owner's calls, which run one at a time per key; the watcher, the lease timer and renewal read
   * the volatile ones.
   */
  private static final class QueueEntry {
    volatile @Nullable String node;
    long czxid;
    int version;
    int holdCount;

    /** A create was sent whose answer was lost: a node of ours may exist unknown to us. */
    boolean uncertain;

    /** Grants made through this backend and not yet released. */
    volatile int localHolds;

    volatile long leaseEndNanos;
    volatile @Nullable ScheduledFuture<?> leaseTimer;
    volatile @Nullable String watched;
    volatile @Nullable Watcher watcher;

    void forgetNode() {
      node = null;
      localHolds = 0;
      watched = null;
      watcher = null;
    }
  }
}
