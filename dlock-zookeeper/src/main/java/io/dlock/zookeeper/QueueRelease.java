package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of an owner's part in a queue, the way Curator's {@code InterProcessMutex} counts and
 * gives back holds: a release takes back one hold (deleting the node with the last one, so the next
 * waiter is woken), and an abandon deletes the node of a wait that ended without a grant. Both run
 * in turn with the owner's other calls on the lock, so they always see the node of an acquisition
 * issued before them.
 */
final class QueueRelease {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final LockPaths paths;
  private final String description;
  private final QueueEntries entries;
  private final QueueNodes nodes;
  private final OrderedCalls calls;
  private final ZooKeeperFailures failures;
  private final WaiterWakeUps wakeUps;
  private final ZooKeeperSession session;

  /**
   * @param description the ensemble and root, for messages
   * @param wakeUps the waiting owners, unregistered here when they give up
   * @param session where a clean-up that failed for want of a connection is left for the reconnect
   */
  QueueRelease(
      CuratorFramework client,
      LockPaths paths,
      String description,
      QueueEntries entries,
      QueueNodes nodes,
      OrderedCalls calls,
      ZooKeeperFailures failures,
      WaiterWakeUps wakeUps,
      ZooKeeperSession session) {
    this.client = client;
    this.paths = paths;
    this.description = description;
    this.entries = entries;
    this.nodes = nodes;
    this.calls = calls;
    this.failures = failures;
    this.wakeUps = wakeUps;
    this.session = session;
  }

  CompletableFuture<ReleaseResult> release(String lockName, LockOwner owner, long fencingToken) {
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
              entries.remove(key, entry);
              return CompletableFuture.completedFuture(ReleaseResult.RELEASED);
            case NONODE:
              entry.localHolds = 0;
              entries.remove(key, entry);
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
            entries.withEntry(
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
      entries.remove(key, entry);
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

  CompletableFuture<Void> abandon(String lockName, LockOwner owner) {
    wakeUps.abandoned(lockName, owner); // this acquisition's owner instance
    return dropWait(lockName, owner.key());
  }

  /** Deletes the queue node of a wait that ended without a grant, in turn with the key's calls. */
  CompletableFuture<Void> dropWait(String lockName, String owner) {
    LockAndOwner key = new LockAndOwner(lockName, owner);
    if (!entries.contains(key) && !calls.hasPending(key)) {
      return CompletableFuture.completedFuture(null); // nothing queued or pending for this owner
    }
    // The clean-up is queued behind this owner's earlier calls (so it sees their node) but not
    // waited for: an acquisition still stuck on a lost connection must not also delay the caller.
    // If the connection is down, it is retried once the same session is back.
    // When nothing is pending for the key, the delete is sent from this thread, before any later
    // request of this client: a new attempt of the same client never sees the abandoned node.
    DeferredCleanups deferred = session.abandonAfterReconnect();
    long generation = deferred.generation(); // before the clean-up can fail
    calls
        .submitAsync(key, "abandon wait for '" + lockName + "'", false, () -> leaveFast(key))
        .whenComplete(
            (v, failure) -> {
              if (failure != null) {
                log.debug("Abandon of '{}' deferred: {}", lockName, failure.toString());
                deferred.failed(key, generation);
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
      entries.remove(key, entry);
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
                  entries.remove(key, entry);
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
        () -> entries.withEntry(key, false, e -> leave(key, e)));
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
    entries.remove(key, entry);
    return null;
  }
}
