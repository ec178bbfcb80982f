package io.dlock.zookeeper;

import static io.dlock.zookeeper.ZooKeeperLockBackend.MAX_ROUNDS;

import io.dlock.BackendUnavailableException;
import io.dlock.LockInfo;
import io.dlock.spi.LockAdministration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Inspection and administration of the locks under the root, on behalf of operators rather than
 * holders: listing the holders of the locks that match a glob, and forcing the release of a lock.
 * Both work from what the server says (the queue heads, read in the background after a {@code
 * sync}), never from this client's own bookkeeping.
 */
final class ZooKeeperLockAdministration implements LockAdministration {
  // The backend's logger: a forced release is logged under the name users configure for it.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final LockPaths paths;
  private final QueueNodes nodes;
  private final ZooKeeperFailures failures;

  ZooKeeperLockAdministration(
      CuratorFramework client, LockPaths paths, QueueNodes nodes, ZooKeeperFailures failures) {
    this.client = client;
    this.paths = paths;
    this.nodes = nodes;
    this.failures = failures;
  }

  /** See {@link ZooKeeperLockBackend#administration}. */
  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    Objects.requireNonNull(namePattern, "namePattern");
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(failures.notConnected());
    }
    java.util.regex.Pattern glob = glob(namePattern);
    String operation = "list locks matching '" + namePattern + "'";
    return syncAsync(paths.root())
        .thenCompose(v -> nodes.listAsync(paths.root()))
        .thenCompose(
            event -> {
              KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
              if (code == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(List.<LockInfo>of());
              }
              if (code != KeeperException.Code.OK) {
                return CompletableFuture.failedFuture(failures.failed(operation, code));
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
                throw new java.util.concurrent.CompletionException(
                    failures.failure(operation, failure));
              }
              return infos;
            });
  }

  /** See {@link ZooKeeperLockBackend#forceRelease}. */
  @Override
  public CompletableFuture<java.util.Optional<LockInfo>> forceRelease(String lockName) {
    if (!client.getZookeeperClient().isConnected()) {
      return CompletableFuture.failedFuture(failures.notConnected());
    }
    return syncAsync(paths.root())
        .thenCompose(v -> forceRelease(lockName, "force the release of '" + lockName + "'", 0))
        .handle(
            (info, failure) -> {
              if (failure != null) {
                throw new java.util.concurrent.CompletionException(
                    failures.failure("force the release of '" + lockName + "'", failure));
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
                    return CompletableFuture.failedFuture(failures.failed(operation, code));
                  });
            });
  }

  /** The head of a lock's queue with its data, read in the background; empty if not held. */
  private CompletableFuture<java.util.Optional<Holder>> holder(
      String lockName, String operation, int round) {
    String parent = paths.lockPath(lockName);
    return nodes
        .listAsync(parent)
        .thenCompose(
            listing -> {
              KeeperException.Code code = KeeperException.Code.get(listing.getResultCode());
              if (code == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(java.util.Optional.<Holder>empty());
              }
              if (code != KeeperException.Code.OK) {
                return CompletableFuture.failedFuture(failures.failed(operation, code));
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
                      return CompletableFuture.failedFuture(failures.failed(operation, dataCode));
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

  /** The head node of a lock's queue: its path, data version and what it says. */
  private record Holder(String path, int version, LockInfo info) {}

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
                  answer.completeExceptionally(failures.failed("sync " + path, code));
                }
              })
          .forPath(path);
    } catch (Exception e) {
      answer.completeExceptionally(failures.unavailable("sync " + path, e));
    }
    return answer;
  }
}
