package io.dlock.zookeeper;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import org.apache.curator.framework.CuratorFramework;

/**
 * Creates lock clients on ZooKeeper.
 *
 * <pre>{@code
 * try (LockClient locks = ZooKeeperLocks.newClient("zk1:2181,zk2:2181,zk3:2181")) {
 *   try (Lease lease = locks.lock("orders:42").acquire(Duration.ofSeconds(5))) {
 *     store.write(order, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p>A client connects at creation and fails with {@link io.dlock.BackendUnavailableException} if
 * the ensemble cannot be reached within the connection timeout; it never hangs.
 */
public final class ZooKeeperLocks {
  private ZooKeeperLocks() {}

  /**
   * A client for the ensemble at {@code connectString} with default settings.
   *
   * @throws io.dlock.BackendUnavailableException if no server answers within 5 s
   */
  public static LockClient newClient(String connectString) {
    return newClient(ZooKeeperLockSettings.of(connectString), LockClientOptions.defaults());
  }

  /** A client with these ZooKeeper settings and client options. */
  public static LockClient newClient(ZooKeeperLockSettings settings, LockClientOptions options) {
    return LockClients.create(ZooKeeperLockBackend.connect(settings), options);
  }

  /**
   * A client on an existing, started Curator client (for applications that already have one). Its
   * connection, retry, ACL and namespace settings apply; closing the lock client does not close it.
   */
  public static LockClient newClient(
      CuratorFramework curator, String rootPath, LockClientOptions options) {
    return LockClients.create(ZooKeeperLockBackend.using(curator, rootPath), options);
  }
}
