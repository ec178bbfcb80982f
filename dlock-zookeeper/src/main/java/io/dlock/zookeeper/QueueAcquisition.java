package io.dlock.zookeeper;

import static io.dlock.zookeeper.ZooKeeperLockBackend.MAX_ROUNDS;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LeaseEndTimer;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquire path, the way Curator's {@code LockInternals} holds the queue loop apart from the
 * mutex and the node requests: a new queue node and its listing, the grant of the queue head, the
 * re-entry of an owner that holds the lock, joining an owner id's hold, and the watch on a waiter's
 * predecessor, whose notification signals the core (and prefetches the listing for its re-attempt).
 * A waiter watches only the node just before its own, so a release wakes one client (no herd).
 */
final class QueueAcquisition {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  /**
   * The retry bound of an attempt that ends without a watch set (the queue kept changing under it):
   * with no watch there is no release signal to wait for, so the core tries again after this.
   */
  private static final Duration RETRY_WITHOUT_WATCH = Duration.ofMillis(10);

  private final CuratorFramework client;
  private final LockPaths paths;
  private final QueueEntries entries;
  private final QueueNodes nodes;
  private final LeaseEndTimer<QueueEntry> leaseTimer;
  private final OrderedCalls calls;
  private final JoinedHolds joinedHolds;
  private final ZooKeeperFailures failures;
  private final WaiterWakeUps wakeUps;
  private final Map<String, ReleaseListener> listeners;

  /** See {@link ZooKeeperLockSettings#withOwnerIdsSharedAcrossClients}. */
  private final boolean shareOwnerIds;

  private final AtomicLong watchNotifications = new AtomicLong();

  /**
   * Test seam: runs before each try of a create on the slow path; may throw what ZooKeeper does.
   */
  private volatile @Nullable BeforeCreate beforeCreate;

  /** What runs before a create: a test's stand-in for the server's answer. */
  @FunctionalInterface
  interface BeforeCreate {
    void run(String lockName) throws Exception;
  }

  /** Test seam: runs when a create's answer arrived, before its node is tracked or dropped. */
  private volatile java.util.function.@Nullable Consumer<String> beforeTracking;

  /**
   * @param wakeUps the waiting owners, registered here while they ask
   * @param listeners the release listeners per lock, signalled by predecessor watches
   */
  QueueAcquisition(
      CuratorFramework client,
      LockPaths paths,
      QueueEntries entries,
      QueueNodes nodes,
      LeaseEndTimer<QueueEntry> leaseTimer,
      OrderedCalls calls,
      JoinedHolds joinedHolds,
      ZooKeeperFailures failures,
      WaiterWakeUps wakeUps,
      Map<String, ReleaseListener> listeners,
      boolean shareOwnerIds) {
    this.client = client;
    this.paths = paths;
    this.entries = entries;
    this.nodes = nodes;
    this.leaseTimer = leaseTimer;
    this.calls = calls;
    this.joinedHolds = joinedHolds;
    this.failures = failures;
    this.wakeUps = wakeUps;
    this.listeners = listeners;
    this.shareOwnerIds = shareOwnerIds;
  }

  /** Watch notifications (node events) received; see {@link ZooKeeperLockBackend}. */
  long watchNotifications() {
    return watchNotifications.get();
  }

  /** One attempt of {@link io.dlock.spi.LockBackend#tryAcquire}. */
  CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease) {
    String owner = lockOwner.key();
    LockAndOwner key = new LockAndOwner(lockName, owner);
    // On the caller's thread: the description names the thread that acquires.
    String description =
        LockPaths.description(System.currentTimeMillis(), HolderDescription.of(lockOwner));
    long leaseNanos = lease.toNanos();
    WaiterWakeUps.Registration waiting = wakeUps.asked(lockName, lockOwner);
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
    QueueEntry entry = entries.getOrCreate(key);
    String node = entry.node;
    if (entry.uncertain
        || entry.localHolds > 0
        || !client.getZookeeperClient().isConnected()
        || beforeCreate != null) {
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
      entry.extendLease(leaseTimer, leaseTimer.now() + leaseNanos);
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
        () -> entries.withEntry(key, true, e -> acquire(key, e, leaseNanos, description, listing)));
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
        entry.extendLease(leaseTimer, leaseTimer.now() + leaseNanos);
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
        entry.extendLease(leaseTimer, leaseTimer.now() + leaseNanos);
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
    String path;
    for (int tries = 1; ; tries++) {
      try {
        BeforeCreate hook = beforeCreate;
        if (hook != null) {
          hook.run(key.lockName());
        }
        path =
            client
                .create()
                .storingStatIn(stat)
                .creatingParentContainersIfNeeded()
                .withProtection()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(
                    paths.nodePrefix(key.lockName(), LockPaths.ownerKey(key.owner())),
                    LockPaths.data(1, description));
        break;
      } catch (KeeperException.NoNodeException e) {
        // The server's container reaper deleted the lock's parent node, empty after the last
        // release, between its creation (or the finding that it exists) and this node's: nothing
        // was created, so create again, as Curator's own lock recipe does. Thrown, it failed an
        // acquisition as BackendUnavailableException (CI saw it).
        if (tries >= 3) {
          throw e;
        }
      }
    }
    runBeforeTracking(path);
    if (!entry.track(path, stat, description)) {
      // The session ended while the create was under way (see acquireFast): an untracked node
      // of the new session would block the queue. Delete it; the caller learns of the lost
      // session.
      nodes.deleteQuietly(path);
      throw new KeeperException.SessionExpiredException();
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

  /** For tests: {@code hook} runs before each try of a create on the slow path. */
  void beforeCreate(@Nullable BeforeCreate hook) {
    this.beforeCreate = hook;
  }

  /** For tests: {@code hook} runs with a created node's path just before it is tracked. */
  void beforeTracking(java.util.function.@Nullable Consumer<String> hook) {
    this.beforeTracking = hook;
  }

  private void runBeforeTracking(String path) {
    java.util.function.Consumer<String> hook = beforeTracking;
    if (hook != null) {
      hook.accept(path);
    }
  }
}
