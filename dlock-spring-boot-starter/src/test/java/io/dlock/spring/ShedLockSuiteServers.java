package io.dlock.spring;

import io.dlock.testkit.server.PostgresServerProcess;
import java.util.Map;
import org.apache.curator.test.TestingServer;

/**
 * The servers ShedLock's provider suites run on, one of each per test JVM, shared by the suite
 * classes: the module's Redis ({@link TestRedis}), the PostgreSQL named by {@code
 * DLOCK_TEST_POSTGRES_URL} (as CI sets it) or else dlock-testkit's embedded one, and a ZooKeeper
 * server in this JVM. Each is started on first use and stopped when the JVM exits.
 */
final class ShedLockSuiteServers {
  private ShedLockSuiteServers() {}

  /** A backend URI and the properties that go with it. */
  record Backend(String uri, Map<String, String> properties) {}

  static Backend redis() {
    return new Backend(TestRedis.uri(), Map.of());
  }

  /** Lease rows (the JDBC default) in a table of their own, created on first use. */
  static Backend postgres() {
    String external = System.getenv("DLOCK_TEST_POSTGRES_URL");
    String url =
        external == null || external.isBlank() ? PostgresServerProcess.shared().url() : external;
    return new Backend(url, Map.of("table", "dlock_shedlock_suite", "createSchema", "true"));
  }

  static Backend zooKeeper() {
    return new Backend(
        "zk://127.0.0.1:" + ZooKeeperHolder.SERVER.getPort() + "/dlock-shedlock-suite", Map.of());
  }

  private static final class ZooKeeperHolder {
    static final TestingServer SERVER = start();

    private static TestingServer start() {
      try {
        TestingServer server = new TestingServer(true);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server), "stop-test-zookeeper"));
        return server;
      } catch (Exception e) {
        throw new IllegalStateException("cannot start a ZooKeeper server for the tests", e);
      }
    }

    private static void stop(TestingServer server) {
      try {
        server.close();
      } catch (java.io.IOException e) {
        // The JVM is exiting: the server's files are temporary.
      }
    }
  }
}
