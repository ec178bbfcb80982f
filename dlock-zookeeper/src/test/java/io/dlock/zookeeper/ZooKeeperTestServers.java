package io.dlock.zookeeper;

import io.dlock.testkit.ServerControl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.TestingZooKeeperServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * Real ZooKeeper servers in the test JVM (curator-test), started once per JVM and shared by the
 * test classes, because a 3-node ensemble takes seconds to start on a 2-core machine.
 *
 * <p>The servers tick every 200 ms, so sessions may be as short as 400 ms and as long as the {@code
 * maxSessionTimeout} of 60 s; container nodes are swept every 200 ms (system property set by the
 * module's surefire configuration) instead of every minute.
 */
final class ZooKeeperTestServers {
  static final int TICK_MILLIS = 200;

  private static TestingServer single;
  private static TestingCluster cluster;

  private ZooKeeperTestServers() {}

  static synchronized TestingServer single() {
    if (single == null) {
      try {
        single = new TestingServer(spec(-1), true);
      } catch (Exception e) {
        throw new IllegalStateException("Could not start a ZooKeeper test server", e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(ZooKeeperTestServers::closeSingle));
    }
    return single;
  }

  static synchronized TestingCluster cluster() {
    if (cluster == null) {
      List<InstanceSpec> specs = new ArrayList<>();
      for (int id = 1; id <= 3; id++) {
        specs.add(spec(id));
      }
      TestingCluster started = new TestingCluster(specs.toArray(new InstanceSpec[0]));
      try {
        started.start();
      } catch (Exception e) {
        throw new IllegalStateException("Could not start a 3-node ZooKeeper test ensemble", e);
      }
      cluster = started;
      Runtime.getRuntime().addShutdownHook(new Thread(ZooKeeperTestServers::closeCluster));
    }
    return cluster;
  }

  private static InstanceSpec spec(int serverId) {
    return new InstanceSpec(
        null,
        -1,
        -1,
        -1,
        true,
        serverId,
        TICK_MILLIS,
        -1,
        Map.of("maxSessionTimeout", "60000", "admin.enableServer", "false"),
        "127.0.0.1");
  }

  private static synchronized void closeSingle() {
    try {
      single.close();
    } catch (IOException e) {
      // the JVM is ending
    }
  }

  private static synchronized void closeCluster() {
    try {
      cluster.close();
    } catch (IOException e) {
      // the JVM is ending
    }
  }

  /** Settings for tests: a short session, a connection timeout long enough for an election. */
  static ZooKeeperLockSettings settings(String connectString, String root) {
    return ZooKeeperLockSettings.of(connectString)
        .withRootPath(root)
        .withSessionTimeout(Duration.ofSeconds(4))
        .withConnectionTimeout(Duration.ofSeconds(15));
  }

  /** Stops and restarts the single server (same port, same data). */
  static ServerControl control(TestingServer server) {
    return new ServerControl() {
      @Override
      public void stop() {
        try {
          server.stop();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }

      @Override
      public void start() {
        try {
          server.restart();
        } catch (Exception e) {
          throw new IllegalStateException("Could not restart the ZooKeeper test server", e);
        }
      }
    };
  }

  /** Kills and restarts every member of the ensemble. */
  static ServerControl control(TestingCluster ensemble) {
    return new ServerControl() {
      @Override
      public void stop() {
        for (InstanceSpec spec : ensemble.getInstances()) {
          try {
            ensemble.killServer(spec);
          } catch (Exception e) {
            throw new IllegalStateException("Could not stop " + spec, e);
          }
        }
      }

      @Override
      public void start() {
        for (InstanceSpec spec : ensemble.getInstances()) {
          try {
            ensemble.restartServer(spec);
          } catch (Exception e) {
            throw new IllegalStateException("Could not restart " + spec, e);
          }
        }
      }
    };
  }

  /** The member that currently leads, asked with the {@code srvr} four-letter word. */
  static InstanceSpec leader(TestingCluster ensemble) throws Exception {
    for (InstanceSpec spec : ensemble.getInstances()) {
      try {
        String status = FourLetterWordMain.send4LetterWord("127.0.0.1", spec.getPort(), "srvr");
        if (status.contains("Mode: leader")) {
          return spec;
        }
      } catch (IOException e) {
        // a stopped member
      }
    }
    throw new IllegalStateException("No member of the ensemble leads");
  }

  static boolean isRunning(TestingCluster ensemble, InstanceSpec spec) {
    for (TestingZooKeeperServer server : ensemble.getServers()) {
      if (server.getInstanceSpec().equals(spec)) {
        try {
          FourLetterWordMain.send4LetterWord("127.0.0.1", spec.getPort(), "ruok");
          return true;
        } catch (Exception e) {
          return false;
        }
      }
    }
    return false;
  }

  /** A plain Curator client for the test's own inspection and sabotage. */
  static CuratorFramework admin(String connectString) {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(connectString, 10_000, 10_000, new RetryOneTime(100));
    client.start();
    try {
      if (!client.blockUntilConnected(15, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new IllegalStateException("No connection to " + connectString);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return client;
  }

  /**
   * Ends the session of {@code client} on the server, as its expiry would: a second handle takes
   * the session over (same id and password) and closes it, so its ephemeral nodes go at once. The
   * client learns it only when it next reaches the server; cut it off first (a {@link
   * io.dlock.testkit.net.TcpProxy}), or it may take its session back before the close.
   */
  static void expireSessionOnServer(ZooKeeper client, String connectString) throws Exception {
    java.util.concurrent.CountDownLatch connected = new java.util.concurrent.CountDownLatch(1);
    ZooKeeper twin =
        new ZooKeeper(
            connectString,
            10_000,
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
              }
            },
            client.getSessionId(),
            client.getSessionPasswd());
    try {
      if (!connected.await(15, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new IllegalStateException("Could not take over session " + client.getSessionId());
      }
    } finally {
      twin.close();
    }
  }

  /** Deletes a lock's whole queue, parent included, as an operator might. */
  static void deleteLock(String connectString, String root, String lockName) {
    try (CuratorFramework admin = admin(connectString)) {
      admin
          .delete()
          .quietly()
          .deletingChildrenIfNeeded()
          .forPath(new LockPaths(root).lockPath(lockName));
    } catch (Exception e) {
      throw new IllegalStateException("Could not delete lock " + lockName, e);
    }
  }

  /** Every znode under {@code root} (root excluded), depth first. */
  static List<String> nodesUnder(CuratorFramework admin, String root) throws Exception {
    List<String> found = new ArrayList<>();
    List<String> children;
    try {
      children = admin.getChildren().forPath(root);
    } catch (KeeperException.NoNodeException e) {
      return found;
    }
    for (String child : children) {
      String path = root + "/" + child;
      found.add(path);
      found.addAll(nodesUnder(admin, path));
    }
    return found;
  }
}
