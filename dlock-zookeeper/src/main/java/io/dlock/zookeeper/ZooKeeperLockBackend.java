package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import io.dlock.spi.WaitQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
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
 *
 * <p><b>Parts.</b> This class keeps the queue algorithm and the session handling; the requests on
 * queue nodes are in {@link QueueNodes}, the per-key call order and worker threads in {@link
 * OrderedCalls}, the lease ends in {@link LeaseEndTimer}, holds joined across clients of one owner
 * id in {@link JoinedHolds}, and inspection and forced release in {@link
 * ZooKeeperLockAdministration}.
 */
public final class ZooKeeperLockBackend
    implements LockBackend, ReleaseSignals, WaitQueue, SessionBoundHolds {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
  private static final AtomicInteger IDS = new AtomicInteger();

  /** How often a step is tried again when the queue or a node keeps changing under it. */
  static final int MAX_ROUNDS = 8;

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
  private final ConcurrentHashMap<LockAndOwner, QueueEntry> entries = new ConcurrentHashMap<>();
  private final ZooKeeperFailures failures;
  private final QueueNodes nodes;
  private final LeaseEndTimer leaseTimer;
  private final OrderedCalls calls;
  private final JoinedHolds joinedHolds;
  private final ZooKeeperLockAdministration administration;

  /** Waits whose clean-up failed for want of a connection: retried on reconnection. */
  private final Set<LockAndOwner> abandonAfterReconnect = ConcurrentHashMap.newKeySet();

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
    this.failures = new ZooKeeperFailures(client, description);
    this.nodes = new QueueNodes(client, failures);
    this.leaseTimer = new LeaseEndTimer(timer, this::leaseEnded);
    this.calls = new OrderedCalls(workers, gate, closed::get, failures);
    this.joinedHolds =
        new JoinedHolds(client, nodes, leaseTimer, calls, failures, this::sharedNodeGone);
    this.administration = new ZooKeeperLockAdministration(client, paths, nodes, failures);
    this.sessionId = nodes.currentSessionId();
    client.getConnectionStateListenable().addListener(connectionListener);
    // After the listener is added: a client that connects after this check reports CONNECTED to
    // the listener, which opens the gate; one connected before it is seen connected here.
    if (client.getZookeeperClient().isConnected()) {
      sessionId = nodes.currentSessionId();
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
    CuratorFramework client = CuratorClients.connect(settings);
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

  @Override
  public boolean sharesOwnerIdsAcrossClients() {
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
  public void start(BackendContext context) {
    leaseTimer.useClock(context.clock());
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.of(this);
  }

  @Override
  public Optional<WaitQueue> waitQueue() {
    return Optional.of(this);
  }

  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return Optional.of(this);
  }

  /**
   * Inspection reads the queue heads after a {@code sync}, so the answer includes every grant made
   * before the call; a forced release deletes the head node, version-checked (see {@link
   * ZooKeeperLockAdministration}).
   */
  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(administration);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease) {
    String owner = lockOwner.key();
    LockAndOwner key = new LockAndOwner(lockName, owner);
    // On the caller's thread: the description names the thread that acquires.
    String description =
        LockPaths.description(System.currentTimeMillis(), HolderDescription.of(lockOwner));
    long leaseNanos = lease.toNanos();
    WaiterWakeUps.Registration waiting = wakeUps.asked(lockName, owner);
    // The registration ends before the core sees the grant (and stops watching the lock).
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    calls
        .submitAsync(
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
      LockAndOwner key, long leaseNanos, String description) {
    QueueEntry entry = entries.computeIfAbsent(key, k -> new QueueEntry(leaseTimer.now()));
    String node = entry.node;
    if (entry.uncertain || entry.localHolds > 0 || !client.getZookeeperClient().isConnected()) {
      return acquireOnWorker(key, leaseNanos, description, null);
    }
    String parent = paths.lockPath(key.lockName());
    if (node != null) {
      PrefetchedListing prefetch = entry.prefetch;
      entry.prefetch = null;
      CompletableFuture<CuratorEvent> listing =
          prefetch != null && prefetch.node().equals(node)
              ? prefetch.children()
              : nodes.listAsync(parent);
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
              paths.nodePrefix(key.lockName(), LockPaths.ownerKey(key.owner())),
              LockPaths.data(1, description));
    } catch (Exception e) {
      created.completeExceptionally(e);
    }
    CompletableFuture<CuratorEvent> listing = nodes.listAsync(parent);
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
                nodes.deleteInBackground(path);
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
      LockAndOwner key,
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
      leaseTimer.extendLease(key, entry, leaseTimer.now() + leaseNanos);
      return CompletableFuture.completedFuture(
          new AcquireResult.Granted(entry.czxid, entry.holdCount));
    }
    // Waiting, joining an owner id's hold, or our node is missing from a listing that may have
    // been read before a create that had to make the parent first: the blocking path decides.
    return acquireOnWorker(key, leaseNanos, description, position > 0 ? queue : null);
  }

  private CompletableFuture<AcquireResult> acquireOnWorker(
      LockAndOwner key, long leaseNanos, String description, @Nullable List<String> listing) {
    return calls.onWorker(
        "acquire '" + key.lockName() + "'",
        () -> withEntry(key, true, e -> acquire(key, e, leaseNanos, description, listing)));
  }

  /**
   * One attempt, blocking (on a worker thread).
   *
   * @param listing the queue in order as read after this owner's node was created, or null to read
   *     it
   */
  private AcquireResult acquire(
      LockAndOwner key,
      QueueEntry entry,
      long leaseNanos,
      String description,
      @Nullable List<String> listing)
      throws Exception {
    String parent = paths.lockPath(key.lockName());
    String ownerKey = LockPaths.ownerKey(key.owner());
    for (int round = 0; round < MAX_ROUNDS; round++) {
      String node = entry.node;
      if (node != null && entry.localHolds > 0) {
        // The same owner again (an owner id): count the hold on the server.
        if (nodes.changeHoldCount(entry, +1) == null) {
          forget(entry);
          continue;
        }
        entry.localHolds++;
        leaseTimer.extendLease(key, entry, leaseTimer.now() + leaseNanos);
        return new AcquireResult.Granted(entry.czxid, entry.holdCount);
      }
      if (node == null) {
        if (entry.uncertain) {
          nodes.adoptOrDeleteOrphans(entry, parent, ownerKey);
        }
        if (entry.node == null) {
          create(entry, key, description);
        }
        node = Objects.requireNonNull(entry.node);
      }
      List<String> queue = round == 0 && listing != null ? listing : nodes.children(parent);
      String mine = node.substring(node.lastIndexOf('/') + 1);
      int position = queue.indexOf(mine);
      if (position < 0) {
        // Our node is gone (deleted behind our back, or its session ended): queue again.
        forget(entry);
        continue;
      }
      if (position == 0) {
        entry.localHolds = 1;
        leaseTimer.extendLease(key, entry, leaseTimer.now() + leaseNanos);
        return new AcquireResult.Granted(entry.czxid, entry.holdCount);
      }
      String head = queue.get(0);
      if (shareOwnerIds && ownerKey.equals(LockPaths.ownerKeyOf(head))) {
        // The same owner id holds the lock through another client: join its hold. (Off by
        // default: then another client's grant of this owner id is waited for like a stranger's.)
        AcquireResult joined = joinedHolds.join(key, entry, parent + "/" + head, leaseNanos);
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
      joinedHolds.removeSharedWatch(shared);
    }
    entry.forgetNode();
  }

  private void create(QueueEntry entry, LockAndOwner key, String description) throws Exception {
    failures.ensureConnected();
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
                paths.nodePrefix(key.lockName(), LockPaths.ownerKey(key.owner())),
                LockPaths.data(1, description));
    runBeforeTracking(path);
    if (!entry.track(path, stat, description)) {
      // The session ended while the create was under way (see acquireFast): an untracked node
      // of the new session would block the queue. Delete it; the caller learns of the lost
      // session.
      nodes.deleteQuietly(path);
      throw new KeeperException.SessionExpiredException();
    }
  }

  /** Reports this client's holds on a joined node lost when the node was deleted. */
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
          watch.key.lockName(),
          watch.key.owner(),
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
  private boolean watch(LockAndOwner key, QueueEntry entry, String predecessor) throws Exception {
    failures.ensureConnected();
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

  private void onPredecessorEvent(LockAndOwner key, PredecessorWatch watch, WatchedEvent event) {
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
        entry.prefetch =
            new PrefetchedListing(node, nodes.listAsync(paths.lockPath(key.lockName())));
      }
    }
    ReleaseListener listener = listeners.get(key.lockName());
    if (listener != null) {
      try {
        listener.released(key.owner());
      } catch (RuntimeException e) {
        log.warn("A release listener of '{}' failed: {}", key.lockName(), e.toString());
      }
    }
  }

  // ---- release, abandon -----------------------------------------------------------------------

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    LockAndOwner key = new LockAndOwner(lockName, owner.key());
    return calls.submitAsync(
        key, "release '" + lockName + "'", true, () -> releaseFast(key, fencingToken));
  }

  /**
   * The last hold of a node whose version we know: one version-checked delete, sent from the
   * calling thread. Anything else (a hold count above one, an unknown version, another client of
   * the same owner id changed the count, a grant other than the one tracked) runs the blocking
   * {@link #releaseOwn} on a worker.
   */
  private CompletableFuture<ReleaseResult> releaseFast(LockAndOwner key, long fencingToken) {
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

  private CompletableFuture<ReleaseResult> releaseOnWorker(LockAndOwner key, long fencingToken) {
    return calls.onWorker(
        "release '" + key.lockName() + "'",
        () ->
            withEntry(
                key,
                false,
                e -> e == null ? releaseForeign(key) : releaseOwn(key, e, fencingToken)));
  }

  private ReleaseResult releaseOwn(LockAndOwner key, QueueEntry entry, long fencingToken)
      throws Exception {
    if (entry.node == null || entry.localHolds == 0) {
      return releaseForeign(key);
    }
    if (!entry.isGrant(fencingToken)) {
      // An owner id's earlier grant, which ended behind its holders' backs: the node tracked now
      // is a newer grant of the same owner id (another czxid), and only its own holds release it.
      log.debug(
          "Release of '{}' with fencing token {}: the owner's grant now is {}",
          key.lockName(),
          fencingToken,
          entry.czxid);
      return ReleaseResult.NOT_HELD;
    }
    Integer left = nodes.changeHoldCount(entry, -1);
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
  private static ReleaseResult releaseForeign(LockAndOwner key) {
    log.debug("Release of '{}' by an owner without holds through this client", key.lockName());
    return ReleaseResult.NOT_HELD;
  }

  @Override
  public CompletableFuture<Void> abandon(String lockName, LockOwner owner) {
    wakeUps.abandoned(lockName, owner.key()); // on the acquiring thread, as the core calls it
    return dropWait(lockName, owner.key());
  }

  /** Deletes the queue node of a wait that ended without a grant, in turn with the key's calls. */
  private CompletableFuture<Void> dropWait(String lockName, String owner) {
    LockAndOwner key = new LockAndOwner(lockName, owner);
    if (!entries.containsKey(key) && !calls.hasPending(key)) {
      return CompletableFuture.completedFuture(null); // nothing queued or pending for this owner
    }
    // The clean-up is queued behind this owner's earlier calls (so it sees their node) but not
    // waited for: an acquisition still stuck on a lost connection must not also delay the caller.
    // If the connection is down, it is retried once the same session is back.
    // When nothing is pending for the key, the delete is sent from this thread, before any later
    // request of this client: a new attempt of the same client never sees the abandoned node.
    calls
        .submitAsync(key, "abandon wait for '" + lockName + "'", false, () -> leaveFast(key))
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
  private CompletableFuture<Void> leaveFast(LockAndOwner key) {
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
                      failures.failed("abandon wait for '" + key.lockName() + "'", code));
                }
              })
          .forPath(node);
    } catch (Exception e) {
      deleted.completeExceptionally(e);
    }
    return deleted;
  }

  private CompletableFuture<Void> leaveOnWorker(LockAndOwner key) {
    return calls.onWorker(
        "abandon wait for '" + key.lockName() + "'",
        () -> withEntry(key, false, e -> leave(key, e)));
  }

  private @Nullable Void leave(LockAndOwner key, @Nullable QueueEntry entry) throws Exception {
    if (entry == null || entry.localHolds > 0) {
      return null; // the owner holds the lock (an owner id re-entry gave up): keep it
    }
    String node = entry.node;
    if (node != null) {
      // The waiter's own hold only (see leaveFast): a version-checked decrement, deleting the
      // node at zero.
      nodes.changeHoldCount(entry, -1);
    }
    if (entry.uncertain) {
      entry.node = null;
      nodes.adoptOrDeleteOrphans(
          entry, paths.lockPath(key.lockName()), LockPaths.ownerKey(key.owner()));
      if (entry.node != null) {
        nodes.changeHoldCount(entry, -1); // the adopted node: as above, only this waiter's hold
      }
    }
    removeEntry(key, entry);
    return null;
  }

  // ---- leases ---------------------------------------------------------------------------------

  /**
   * Checks, with all requests pipelined on the one connection (one round trip of latency), that
   * each holder's node still exists with its creation zxid; extends the lease of those that do.
   */
  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(failures.notConnected());
    }
    long sentAt = leaseTimer.now();
    Set<HeldLease> gone = ConcurrentHashMap.newKeySet();
    List<CompletableFuture<Void>> checks = new ArrayList<>();
    for (HeldLease lease : leases) {
      LockAndOwner key = new LockAndOwner(lease.lockName(), lease.owner().key());
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
                    leaseTimer.extendLease(key, entry, sentAt + lease.lease().toNanos());
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
        check.completeExceptionally(failures.unavailable("renew", e));
      }
    }
    return CompletableFuture.allOf(checks.toArray(new CompletableFuture<?>[0]))
        .thenApply(v -> Set.copyOf(gone));
  }

  private void leaseEnded(LockAndOwner key, QueueEntry entry) {
    if (entries.get(key) != entry) {
      return;
    }
    if (entry.leaseEndNanos - leaseTimer.now() > 0) {
      leaseTimer.scheduleLeaseEnd(key, entry); // renewed meanwhile
      return;
    }
    calls
        .submit(
            key,
            "end lease of '" + key.lockName() + "'",
            () ->
                withEntry(
                    key,
                    false,
                    e -> {
                      if (e != entry || e.leaseEndNanos - leaseTimer.now() > 0) {
                        if (e == entry) {
                          leaseTimer.scheduleLeaseEnd(key, e);
                        }
                        return null;
                      }
                      String node = e.node;
                      if (node != null && e.localHolds > 0) {
                        // Only this client's holds end: with an owner id shared by other clients
                        // whose leases go on, the node stays (their holds keep it).
                        log.debug(
                            "Lease of '{}' ended without renewal on {}", key.lockName(), node);
                        nodes.changeHoldCount(e, -e.localHolds);
                      }
                      removeEntry(key, e);
                      return null;
                    }))
        .whenComplete(
            (v, failure) -> {
              if (failure != null && entries.get(key) == entry) {
                // Not connected: try again shortly; if the session dies, the node dies with it.
                entry.leaseMark = null;
                entry.leaseEndNanos = leaseTimer.now() + TimeUnit.MILLISECONDS.toNanos(200);
                leaseTimer.scheduleLeaseEnd(key, entry);
              }
            });
  }

  // ---- inspection and administration ---------------------------------------------------------

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
        sessionId = nodes.currentSessionId();
        lossApplied = false;
        gate.open();
        joinedHolds.takeBackLeftHolds();
        break;
      case SUSPENDED:
        gate.close();
        if (sink != null) {
          sink.connectionSuspended("ZooKeeper connection to " + description + " suspended");
        }
        break;
      case RECONNECTED:
        long now = nodes.currentSessionId();
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
          joinedHolds.takeBackLeftHolds();
          wakeUps.wakeAll(listeners, detail);
        } else {
          lossApplied = false;
          for (LockAndOwner key : List.copyOf(abandonAfterReconnect)) {
            abandonAfterReconnect.remove(key);
            dropWait(key.lockName(), key.owner());
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

  private void sessionLost(String detail, @Nullable BackendEvents sink) {
    abandonAfterReconnect.clear();
    // The old session's ephemeral nodes are gone (or about to be): forget them all. A node that
    // a create retried by Curator made in the *new* session is alive, though, and every lease is
    // about to be reported lost, so nobody would ever delete it: delete it now.
    long current = nodes.currentSessionId();
    // Detaching an entry is atomic with an owner's call tracking a node in it (QueueEntry.track):
    // either the node is tracked first and deleted here, or the call finds the entry detached
    // and deletes the node itself. Otherwise a node tracked just after this loop read the entry
    // would be held by nobody: the core, told of the loss, would release the grant and find
    // nothing to release.
    for (Map.Entry<LockAndOwner, QueueEntry> e : entries.entrySet()) {
      QueueEntry entry = e.getValue();
      String shared = entry.node;
      int holds = entry.localHolds;
      if (entry.sharedWatch != null && shared != null && holds > 0) {
        joinedHolds.takeBackLater(shared, entry.czxid, holds);
      }
      String node = entry.detach(current);
      if (node != null) {
        nodes.deleteInBackground(node);
      }
      removeEntry(e.getKey(), entry);
    }
    if (sink != null) {
      sink.sessionLost(detail);
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
    joinedHolds.beforeJoinWrite(hook);
  }

  private void runBeforeTracking(String path) {
    java.util.function.Consumer<String> hook = beforeTracking;
    if (hook != null) {
      hook.accept(path);
    }
  }

  // ---- plumbing -------------------------------------------------------------------------------

  @FunctionalInterface
  private interface EntryCall<T> {
    T call(@Nullable QueueEntry entry) throws Exception;
  }

  /**
   * Runs {@code call} with the entry of {@code key} (created if {@code create}). Only called from
   * tasks that {@link OrderedCalls#submit} runs one at a time per key, so no lock is needed here.
   */
  private <T> T withEntry(LockAndOwner key, boolean create, EntryCall<T> call) throws Exception {
    QueueEntry entry =
        create
            ? entries.computeIfAbsent(key, k -> new QueueEntry(leaseTimer.now()))
            : entries.get(key);
    if (entry == null) {
      return call.call(null);
    }
    T result = call.call(entry);
    if (entry.node == null && entry.localHolds <= 0 && !entry.uncertain) {
      removeEntry(key, entry);
    }
    return result;
  }

  private void removeEntry(LockAndOwner key, QueueEntry entry) {
    entry.detach(0);
    entries.remove(key, entry);
    leaseTimer.unregister(entry);
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
      joinedHolds.removeSharedWatch(shared);
    }
  }

  private static ThreadFactory daemonThreads(String name) {
    AtomicInteger n = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, name + "-" + n.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
