package io.dlock.zookeeper;

import static io.dlock.zookeeper.ZooKeeperLockBackend.MAX_ROUNDS;

import io.dlock.BackendUnavailableException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests on this client's queue nodes, the way Curator's {@code StandardLockInternalsDriver}
 * holds its node requests apart from the queue algorithm: listing a queue, counting holds in a
 * node's data, adopting the nodes of a create whose answer was lost, deleting. The blocking ones
 * run on worker threads and fail with {@link BackendUnavailableException} while not connected.
 */
final class QueueNodes {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final ZooKeeperFailures failures;

  QueueNodes(CuratorFramework client, ZooKeeperFailures failures) {
    this.client = client;
    this.failures = failures;
  }

  /**
   * The children of {@code path}, requested in the background: completes with the answer whatever
   * its result code, exceptionally only if the request could not be sent.
   */
  CompletableFuture<CuratorEvent> listAsync(String path) {
    CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
    try {
      client.getChildren().inBackground((c, event) -> answer.complete(event)).forPath(path);
    } catch (Exception e) {
      answer.completeExceptionally(failures.unavailable("list " + path, e));
    }
    return answer;
  }

  /** The queue under {@code parent}, in order; empty if there is no such lock. */
  List<String> children(String parent) throws Exception {
    failures.ensureConnected();
    try {
      return LockPaths.queueOrder(client.getChildren().forPath(parent));
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }

  /**
   * Changes the hold count on the server by {@code delta}, with a version check so that concurrent
   * holders of one owner id never lose an update; at zero the node is deleted.
   *
   * @return the new count, 0 if the node was deleted, or null if the node is gone
   */
  @Nullable Integer changeHoldCount(QueueEntry entry, int delta) throws Exception {
    String node = Objects.requireNonNull(entry.node);
    for (int round = 0; round < MAX_ROUNDS * 4; round++) {
      failures.ensureConnected();
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

  /**
   * After a create whose answer was lost, looks for nodes of this owner created by this session:
   * adopts the first, deletes the others (Curator's protected-mode idea, across calls).
   */
  void adoptOrDeleteOrphans(QueueEntry entry, String parent, String ownerKey) throws Exception {
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

  /** Deletes a node, waiting for the answer; a node already gone is no failure. */
  void deleteQuietly(String path) throws Exception {
    failures.ensureConnected();
    try {
      client.delete().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      // already gone: that is what we wanted
    }
  }

  /** Deletes a node without waiting; a failure leaves it to its session's end. */
  void deleteInBackground(String path) {
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

  /** The session of the client now (the owner of the nodes it creates), or 0 if it has none. */
  long currentSessionId() {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }
}
