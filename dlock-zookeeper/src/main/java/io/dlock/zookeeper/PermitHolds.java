package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.PermitInfo;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LeaseEndTimer;
import io.dlock.spi.ReleaseResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holder nodes of permits: release, renewal and the end of a lease neither released nor renewed
 * in time (this client deletes its node, as the lock queue does), and the administrator's listing
 * and forced release. The server decides each: a holder node counts as the grant only while it
 * exists with the grant's creation zxid, and every delete is version-checked against the node just
 * read.
 */
final class PermitHolds {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final PermitPaths paths;
  private final String description;
  private final ZooKeeperFailures failures;
  private final Map<LockAndOwner, PermitHold> holds;
  private final LeaseEndTimer<PermitHold> leaseTimer;

  /**
   * @param description the ensemble and root, for messages
   * @param holds the grants held through this client, shared with the acquire path
   */
  PermitHolds(
      CuratorFramework client,
      PermitPaths paths,
      String description,
      ZooKeeperFailures failures,
      Map<LockAndOwner, PermitHold> holds,
      LeaseEndTimer<PermitHold> leaseTimer) {
    this.client = client;
    this.paths = paths;
    this.description = description;
    this.failures = failures;
    this.holds = holds;
    this.leaseTimer = leaseTimer;
  }

  /**
   * Deletes the owner's holder node if it is the grant with {@code token}; blocking. The node's
   * deletion is the release signal: it fires the watch of the head waiter.
   */
  ReleaseResult release(LockAndOwner key, long token) throws Exception {
    failures.ensureConnected();
    PermitHold hold = holds.get(key);
    String path = hold != null && hold.token == token ? hold.path : find(key);
    ReleaseResult result =
        path != null && deleteIfGrant(path, token)
            ? ReleaseResult.RELEASED
            : ReleaseResult.NOT_HELD;
    if (hold != null && hold.token == token) {
      forget(hold);
    }
    return result;
  }

  /**
   * Checks, with the requests pipelined on the one connection, that each lease's holder node still
   * exists with its creation zxid, and extends the lease of those that do.
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(failures.notConnected());
    }
    long sentAt = leaseTimer.now();
    Set<HeldLease> gone = ConcurrentHashMap.newKeySet();
    List<CompletableFuture<Void>> checks = new ArrayList<>();
    for (HeldLease lease : leases) {
      PermitHold hold = holds.get(new LockAndOwner(lease.lockName(), lease.owner().key()));
      if (hold == null || hold.token != lease.fencingToken()) {
        gone.add(lease); // released, its lease ended here, or never granted through this client
        continue;
      }
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
                      && event.getStat().getCzxid() == hold.token) {
                    hold.extendTo(sentAt + lease.lease().toNanos());
                    check.complete(null);
                  } else if (code == KeeperException.Code.OK
                      || code == KeeperException.Code.NONODE) {
                    gone.add(lease); // forced release, or the session ended
                    check.complete(null);
                  } else {
                    check.completeExceptionally(
                        new BackendUnavailableException(
                            "ZooKeeper at " + description + " failed a renewal check: " + code));
                  }
                })
            .forPath(hold.path);
      } catch (Exception e) {
        check.completeExceptionally(failures.unavailable("renew permits", e));
      }
    }
    return CompletableFuture.allOf(checks.toArray(new CompletableFuture<?>[0]))
        .thenApply(v -> Set.copyOf(gone));
  }

  /**
   * A lease end came due; blocking, in turn with the owner's calls. The core reports the end to the
   * holder itself; the node goes so that the permits come back (and the head waiter is woken).
   *
   * @return true if the hold was renewed meanwhile and its new end is registered
   */
  boolean endLease(PermitHold hold) throws Exception {
    if (holds.get(hold.key) != hold) {
      return false; // released meanwhile
    }
    if (hold.leaseEndNanos - leaseTimer.now() > 0) {
      leaseTimer.register(hold, hold.leaseEndNanos);
      return true;
    }
    failures.ensureConnected();
    log.debug("Lease of permits of '{}' ended without renewal: {}", hold.key.lockName(), hold.path);
    deleteIfGrant(hold.path, hold.token);
    forget(hold);
    return false;
  }

  /** The grants of {@code semaphore}, read after a {@code sync}, by token; blocking. */
  List<PermitInfo> holders(String semaphore) throws Exception {
    failures.ensureConnected();
    List<PermitInfo> infos = new ArrayList<>();
    for (Grant grant : grants(semaphore)) {
      infos.add(grant.info(semaphore));
    }
    infos.sort(Comparator.comparingLong(PermitInfo::fencingToken));
    return infos;
  }

  /** Deletes the grant with {@code token} whatever its owner; blocking. */
  Optional<PermitInfo> forceRelease(String semaphore, long token) throws Exception {
    failures.ensureConnected();
    for (Grant grant : grants(semaphore)) {
      if (grant.stat.getCzxid() != token) {
        continue;
      }
      try {
        client.delete().withVersion(grant.stat.getVersion()).forPath(grant.path);
      } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
        return Optional.empty(); // released (or replaced) meanwhile
      }
      log.warn("Forced release of permits of '{}' with fencing token {}", semaphore, token);
      return Optional.of(grant.info(semaphore));
    }
    return Optional.empty();
  }

  /** One holder node as read: path, count, data and stat. */
  private record Grant(String path, int count, LockPaths.NodeData data, Stat stat) {
    PermitInfo info(String semaphore) {
      return new PermitInfo(
          semaphore,
          data.holder(),
          stat.getCzxid(),
          count,
          data.epochMillis() < 0 ? null : Instant.ofEpochMilli(data.epochMillis()),
          null); // the lease is the holder's session (and its client's timer), not the server's
    }
  }

  private List<Grant> grants(String semaphore) throws Exception {
    String parent = paths.semaphorePath(semaphore);
    List<String> children;
    try {
      client.sync().forPath(parent);
      children = client.getChildren().forPath(parent);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
    List<Grant> grants = new ArrayList<>();
    for (PermitPaths.Holder holder : PermitPaths.holders(children)) {
      String path = parent + "/" + holder.name();
      Stat stat = new Stat();
      try {
        byte[] data = client.getData().storingStatIn(stat).forPath(path);
        grants.add(new Grant(path, holder.count(), LockPaths.NodeData.parse(data), stat));
      } catch (KeeperException.NoNodeException e) {
        // released since the listing
      }
    }
    return grants;
  }

  /** The owner's holder node on the server, for a release that this client has no record of. */
  private @Nullable String find(LockAndOwner key) throws Exception {
    String parent = paths.semaphorePath(key.lockName());
    String ownerKey = LockPaths.ownerKey(key.owner());
    try {
      for (PermitPaths.Holder holder : PermitPaths.holders(client.getChildren().forPath(parent))) {
        if (holder.ownerKey().equals(ownerKey)) {
          return parent + "/" + holder.name();
        }
      }
    } catch (KeeperException.NoNodeException e) {
      // no semaphore, no grant
    }
    return null;
  }

  /** Deletes {@code path} if it is the node created by the grant with {@code token}. */
  private boolean deleteIfGrant(String path, long token) throws Exception {
    Stat stat = client.checkExists().forPath(path);
    if (stat == null || stat.getCzxid() != token) {
      return false;
    }
    try {
      client.delete().withVersion(stat.getVersion()).forPath(path);
      return true;
    } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
      return false; // deleted (a forced release) between the look and the delete
    }
  }

  private void forget(PermitHold hold) {
    holds.remove(hold.key, hold);
    leaseTimer.unregister(hold);
  }
}
