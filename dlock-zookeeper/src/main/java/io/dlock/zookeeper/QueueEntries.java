package io.dlock.zookeeper;

import io.dlock.spi.LeaseEndTimer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * The backend's bookkeeping: one {@link QueueEntry} per lock and owner with a node, a hold or a
 * create under way through this client. The one table that the acquire path, release and abandon,
 * renewal, the lease ends and the session handling all read and change.
 */
final class QueueEntries {
  private final ConcurrentHashMap<LockAndOwner, QueueEntry> entries = new ConcurrentHashMap<>();
  private final CuratorFramework client;
  private final QueueNodes nodes;
  private final LeaseEndTimer<QueueEntry> leaseTimer;
  private final JoinedHolds joinedHolds;

  QueueEntries(
      CuratorFramework client,
      QueueNodes nodes,
      LeaseEndTimer<QueueEntry> leaseTimer,
      JoinedHolds joinedHolds) {
    this.client = client;
    this.nodes = nodes;
    this.leaseTimer = leaseTimer;
    this.joinedHolds = joinedHolds;
  }

  @FunctionalInterface
  interface EntryCall<T> {
    T call(@Nullable QueueEntry entry) throws Exception;
  }

  /** The entry of {@code key}, or null. */
  @Nullable QueueEntry get(LockAndOwner key) {
    return entries.get(key);
  }

  /** The entry of {@code key}, created if there is none. */
  QueueEntry getOrCreate(LockAndOwner key) {
    return entries.computeIfAbsent(key, k -> new QueueEntry(k, leaseTimer.now()));
  }

  boolean contains(LockAndOwner key) {
    return entries.containsKey(key);
  }

  /**
   * Runs {@code call} with the entry of {@code key} (created if {@code create}). Only called from
   * tasks that {@link OrderedCalls#submit} runs one at a time per key, so no lock is needed here.
   */
  <T> T withEntry(LockAndOwner key, boolean create, EntryCall<T> call) throws Exception {
    QueueEntry entry = create ? getOrCreate(key) : entries.get(key);
    if (entry == null) {
      return call.call(null);
    }
    T result = call.call(entry);
    if (entry.node == null && entry.localHolds <= 0 && !entry.uncertain) {
      remove(key, entry);
    }
    return result;
  }

  void remove(LockAndOwner key, QueueEntry entry) {
    entry.detach(0);
    entries.remove(key, entry);
    leaseTimer.unregister(entry);
    PredecessorWatch watch = entry.watch;
    Watcher watcher = watch == null || watch.fired ? null : watch.watcher;
    if (watch != null && watcher != null) {
      // Remove the predecessor watch so that an abandoned waiter costs no later notification,
      // and its watcher does not stay in the client's table while the predecessor lives; locally
      // too when not connected (the watch would otherwise stay until the predecessor changes).
      DataWatches.remove(client, watcher, watch.path);
    }
    entry.watch = null;
    SharedNodeWatch shared = entry.sharedWatch;
    entry.sharedWatch = null;
    if (shared != null) {
      joinedHolds.removeSharedWatch(shared);
    }
  }

  /**
   * The session ended: drops every entry (see {@link ZooKeeperSession}); holds counted on other
   * sessions' nodes are remembered for {@link JoinedHolds} to take back.
   */
  void forgetSession() {
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
      remove(e.getKey(), entry);
    }
  }
}
