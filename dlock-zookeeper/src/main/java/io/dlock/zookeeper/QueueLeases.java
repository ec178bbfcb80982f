package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LeaseEndTimer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leases of holders through this client: renewal (the server decides whether a holder's node is
 * still its grant), the end of a lease neither released nor renewed in time (this client's holds on
 * the node are taken back, see {@link LeaseEndTimer}), and the loss of holds on a joined node that
 * was deleted.
 */
final class QueueLeases {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final String description;
  private final QueueEntries entries;
  private final QueueNodes nodes;
  private final LeaseEndTimer<QueueEntry> leaseTimer;
  private final OrderedCalls calls;
  private final ZooKeeperFailures failures;
  private final ZooKeeperSession session;

  /**
   * @param description the ensemble and root, for messages
   * @param session where lost leases are reported
   */
  QueueLeases(
      CuratorFramework client,
      String description,
      QueueEntries entries,
      QueueNodes nodes,
      LeaseEndTimer<QueueEntry> leaseTimer,
      OrderedCalls calls,
      ZooKeeperFailures failures,
      ZooKeeperSession session) {
    this.client = client;
    this.description = description;
    this.entries = entries;
    this.nodes = nodes;
    this.leaseTimer = leaseTimer;
    this.calls = calls;
    this.failures = failures;
    this.session = session;
  }

  /**
   * Checks, with all requests pipelined on the one connection (one round trip of latency), that
   * each holder's node still exists with its creation zxid; extends the lease of those that do.
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
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
                    entry.extendLease(leaseTimer, sentAt + lease.lease().toNanos());
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

  void leaseEnded(LockAndOwner key, QueueEntry entry) {
    if (entries.get(key) != entry) {
      return;
    }
    if (entry.leaseEndNanos - leaseTimer.now() > 0) {
      leaseTimer.register(entry, entry.leaseEndNanos); // renewed meanwhile
      return;
    }
    calls
        .submit(
            key,
            "end lease of '" + key.lockName() + "'",
            () ->
                entries.withEntry(
                    key,
                    false,
                    e -> {
                      if (e != entry || e.leaseEndNanos - leaseTimer.now() > 0) {
                        if (e == entry) {
                          leaseTimer.register(e, e.leaseEndNanos);
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
                      entries.remove(key, e);
                      return null;
                    }))
        .whenComplete(
            (v, failure) -> {
              if (failure != null && entries.get(key) == entry) {
                // Not connected: try again shortly; if the session dies, the node dies with it.
                leaseTimer.register(entry, leaseTimer.now() + TimeUnit.MILLISECONDS.toNanos(200));
              }
            });
  }

  /** Reports this client's holds on a joined node lost when the node was deleted. */
  void sharedNodeGone(SharedNodeWatch watch) {
    QueueEntry entry = watch.entry;
    if (entries.get(watch.key) != entry
        || !watch.path.equals(entry.node)
        || entry.localHolds <= 0
        || entry.deleting) {
      return; // released by this client, or not (yet) a hold
    }
    BackendEvents sink = session.events();
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
}
