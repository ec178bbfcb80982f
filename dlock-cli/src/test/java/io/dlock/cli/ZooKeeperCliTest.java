package io.dlock.cli;

import io.dlock.LockClient;
import io.dlock.LockClients;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The command line against a real ZooKeeper server started in the test JVM. */
class ZooKeeperCliTest extends CliContract {
  private static TestingServer zookeeper;
  private static LockClient admin;

  @BeforeAll
  static void start() throws Exception {
    zookeeper = new TestingServer(true);
    admin = LockClients.connect(uri());
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
    zookeeper.close();
  }

  private static String uri() {
    return "zk://127.0.0.1:" + zookeeper.getPort() + "/dlock-cli";
  }

  @Override
  protected String backendUri() {
    return uri();
  }

  @Override
  protected void deleteLockOnServer(String name) {
    // The holder's node deleted behind its back, as an operator with zkCli would.
    admin.forceRelease(name);
  }
}
