package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spi.LockBackend;
import io.dlock.testkit.net.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The fixture of a test that runs clients against the shared single server: a root of its own, an
 * admin client to look under it, the backends, clients and proxies the test makes, closed after it
 * (the last made first), and the end check that the test left no node under its root.
 *
 * <p>Registered on a field ({@code @RegisterExtension final ZooKeeperTestClients zk = new
 * ZooKeeperTestClients("dlock-x")}): JUnit makes one per test, so every test has its own root and
 * the end check sees only its own nodes.
 */
final class ZooKeeperTestClients implements BeforeEachCallback, AfterEachCallback {
  /**
   * Holder and waiter nodes go with their release or session; emptied parents are containers, which
   * the server sweeps (every 200 ms in tests): this is the bound for both.
   */
  private static final long NODES_GONE_MILLIS = 15_000;

  private final String rootPrefix;
  private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();
  private TestingServer server;
  private String root;
  private CuratorFramework admin;

  /** {@code rootPrefix}: the root's name before its random part, to tell tests' nodes apart. */
  ZooKeeperTestClients(String rootPrefix) {
    this.rootPrefix = rootPrefix;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    server = ZooKeeperTestServers.single();
    root = "/" + rootPrefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    admin = ZooKeeperTestServers.admin(server.getConnectString());
  }

  /** Closes what the test made, the last made first, then awaits an empty root. */
  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    try {
      for (int i = closeables.size() - 1; i >= 0; i--) {
        closeables.get(i).close();
      }
      if (server != null) {
        if (admin == null) {
          openAdmin(); // closed by a test that failed before it opened it again
        }
        await()
            .atMost(millis(NODES_GONE_MILLIS))
            .untilAsserted(() -> assertThat(nodesUnder(root)).isEmpty());
      }
    } finally {
      closeAdmin();
    }
  }

  TestingServer server() {
    return server;
  }

  String connectString() {
    return server.getConnectString();
  }

  String root() {
    return root;
  }

  CuratorFramework admin() {
    return admin;
  }

  /** Every node under {@code path} (the path excluded), seen by the admin client. */
  List<String> nodesUnder(String path) throws Exception {
    return ZooKeeperTestServers.nodesUnder(admin, path);
  }

  /** For a test that stops the server: its admin client must not be left retrying meanwhile. */
  void closeAdmin() {
    if (admin != null) {
      admin.close();
      admin = null;
    }
  }

  /** A new admin client, after {@link #closeAdmin}. */
  void openAdmin() {
    admin = ZooKeeperTestServers.admin(server.getConnectString());
  }

  /** The test settings ({@link ZooKeeperTestServers#settings}) for the server, under the root. */
  ZooKeeperLockSettings settings() {
    return settings(server.getConnectString());
  }

  /** The test settings for {@code connectString} (a proxy's, say), under the root. */
  ZooKeeperLockSettings settings(String connectString) {
    return ZooKeeperTestServers.settings(connectString, root);
  }

  /** A backend on the server with the test settings, closed after the test. */
  ZooKeeperLockBackend backend() {
    return backend(settings());
  }

  /** A backend on {@code connectString} with the test settings, closed after the test. */
  ZooKeeperLockBackend backend(String connectString) {
    return backend(settings(connectString));
  }

  ZooKeeperLockBackend backend(ZooKeeperLockSettings settings) {
    return closeAtEnd(ZooKeeperLockBackend.connect(settings));
  }

  /** A client of a new backend on the server, closed after the test. */
  LockClient client(Duration operationTimeout) {
    return client(backend(), operationTimeout);
  }

  /** A client of {@code backend} (closing it closes the backend), closed after the test. */
  LockClient client(LockBackend backend, Duration operationTimeout) {
    return closeAtEnd(
        LockClients.create(
            backend, LockClientOptions.defaults().withOperationTimeout(operationTimeout)));
  }

  /** A proxy to the server, for a client the test cuts off; closed after the test. */
  TcpProxy proxy() {
    return closeAtEnd(new TcpProxy(new InetSocketAddress("127.0.0.1", server.getPort())));
  }

  /** Closes {@code closeable} after the test, before whatever was registered earlier. */
  <T extends AutoCloseable> T closeAtEnd(T closeable) {
    closeables.add(closeable);
    return closeable;
  }
}
