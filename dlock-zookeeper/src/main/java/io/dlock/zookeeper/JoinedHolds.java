package io.dlock.zookeeper;

import static io.dlock.zookeeper.ZooKeeperLockBackend.MAX_ROUNDS;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LeaseEndTimer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holds this client counts on nodes that other clients of the same owner id created (see {@link
 * ZooKeeperLockSettings#withOwnerIdsSharedAcrossClients}): joining such a hold, watching its node,
 * and taking holds back when this client can no longer keep them.
 */
final class JoinedHolds {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final QueueNodes nodes;
  private final LeaseEndTimer<QueueEntry> leaseTimer;
  private final OrderedCalls calls;
  private final ZooKeeperFailures failures;
  private final Consumer<SharedNodeWatch> onGone;

  /**
   * Holds this client counted on nodes of other sessions (owner ids shared across clients) when its
   * own session ended: they are reported lost, but the count lives in the other session's node,
   * which would otherwise keep the lock for that session's whole life. Taken back once connected
   * again.
   */
  private final Set<TakeBack> takeBackAfterReconnect = ConcurrentHashMap.newKeySet();

  /**
   * Test seam: runs when a join of an owner id's hold has read the node, before it writes the new
   * count.
   */
  private volatile java.util.function.@Nullable Consumer<String> beforeJoinWrite;

  /**
   * @param onGone reports the loss of this client's holds on a joined node that was deleted
   */
  JoinedHolds(
      CuratorFramework client,
      QueueNodes nodes,
      LeaseEndTimer<QueueEntry> leaseTimer,
      OrderedCalls calls,
      ZooKeeperFailures failures,
      Consumer<SharedNodeWatch> onGone) {
    this.client = client;
    this.nodes = nodes;
    this.leaseTimer = leaseTimer;
    this.calls = calls;
    this.failures = failures;
    this.onGone = onGone;
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
  @Nullable AcquireResult join(LockAndOwner key, QueueEntry entry, String headPath, long leaseNanos)
      throws Exception {
    failures.ensureConnected();
    SharedNodeWatch watch = new SharedNodeWatch(key, entry, headPath, onGone);
    client
        .watchers()
        .add()
        .withMode(org.apache.zookeeper.AddWatchMode.PERSISTENT)
        .usingWatcher(watch)
        .forPath(headPath);
    boolean joined = false;
    try {
      for (int round = 0; round < MAX_ROUNDS * 4; round++) {
        failures.ensureConnected();
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
            nodes.deleteQuietly(ownNode);
          } catch (Exception e) {
            nodes.deleteInBackground(ownNode);
          }
        }
        entry.localHolds = 1;
        if (watch.gone) {
          // Deleted while being recorded: the watch's report may have found no hold yet.
          onGone.accept(watch);
        }
        entry.extendLease(leaseTimer, leaseTimer.now() + leaseNanos);
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

  /** Stops watching a joined node: this client holds nothing on it (any more). */
  void removeSharedWatch(SharedNodeWatch watch) {
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
   * Remembers {@code holds} holds of this client on the node {@code path} of another session, to
   * take back (see {@link #takeBackLeftHolds}) once connected again: this client's session ended.
   */
  void takeBackLater(String path, long czxid, int holds) {
    takeBackAfterReconnect.add(new TakeBack(path, czxid, holds));
  }

  /** Takes back, in the background, the holds of a lost session on other sessions' nodes. */
  void takeBackLeftHolds() {
    for (TakeBack takeBack : List.copyOf(takeBackAfterReconnect)) {
      takeBackAfterReconnect.remove(takeBack);
      calls
          .onWorker(
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

  /** Holds of this client on a node of another session, to take back (see takeBackLater). */
  private record TakeBack(String path, long czxid, int holds) {}

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
}
