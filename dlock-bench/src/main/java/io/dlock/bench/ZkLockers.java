package io.dlock.bench;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.zookeeper.ZooKeeperLockSettings;
import io.dlock.zookeeper.ZooKeeperLocks;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/** The ZooKeeper contenders: raw create-ephemeral / delete, dlock, Curator's InterProcessMutex. */
final class ZkLockers {
  private ZkLockers() {}

  static CuratorFramework curator(String connect) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(
            connect, 30_000, 5_000, new BoundedExponentialBackoffRetry(50, 1000, 3));
    client.start();
    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
      throw new IllegalStateException("No connection to ZooKeeper at " + connect);
    }
    return client;
  }

  /** The limit: create an ephemeral node (one quorum write), delete it (one more). */
  static final class Limit implements Locker {
    private final CuratorFramework curator;
    private final ZooKeeper zk;

    Limit(String connect) throws Exception {
      curator = curator(connect);
      curator.create().orSetData().forPath("/bench-raw");
      zk = curator.getZookeeperClient().getZooKeeper();
    }

    @Override
    public String name() {
      return "limit (create ephemeral + delete)";
    }

    @Override
    public Held acquire(int thread, String key) throws Exception {
      String path = "/bench-raw/" + key;
      while (true) {
        try {
          zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
          return () -> zk.delete(path, -1);
        } catch (KeeperException.NodeExistsException e) {
          Thread.sleep(1); // not used where it is measured: it never waits there
        }
      }
    }

    @Override
    public void close() {
      curator.close();
    }
  }

  static final class Dlock implements Locker {
    private final LockClient[] clients;

    Dlock(String connect, int clientCount) {
      clients = new LockClient[clientCount];
      for (int i = 0; i < clientCount; i++) {
        clients[i] =
            ZooKeeperLocks.newClient(
                ZooKeeperLockSettings.of(connect).withRootPath("/bench-dlock"),
                LockClientOptions.defaults());
      }
    }

    @Override
    public String name() {
      return "dlock";
    }

    @Override
    public Held acquire(int thread, String key) {
      Lease lease = clients[thread % clients.length].lock(key).acquire(RedisLockers.WAIT);
      return lease::release;
    }

    @Override
    public void close() {
      for (LockClient client : clients) {
        client.close();
      }
    }
  }

  static final class Curator implements Locker {
    private final CuratorFramework[] clients;
    private final Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();

    Curator(String connect, int clientCount) throws InterruptedException {
      clients = new CuratorFramework[clientCount];
      for (int i = 0; i < clientCount; i++) {
        clients[i] = curator(connect);
      }
    }

    @Override
    public String name() {
      return "Curator InterProcessMutex";
    }

    @Override
    public Held acquire(int thread, String key) throws Exception {
      int c = thread % clients.length;
      InterProcessMutex mutex =
          mutexes.computeIfAbsent(
              c + "/" + key, k -> new InterProcessMutex(clients[c], "/bench-curator/" + key));
      if (!mutex.acquire(1, TimeUnit.MINUTES)) {
        throw new IllegalStateException("InterProcessMutex not acquired within a minute");
      }
      return mutex::release;
    }

    @Override
    public void close() {
      for (CuratorFramework client : clients) {
        client.close();
      }
    }
  }
}
