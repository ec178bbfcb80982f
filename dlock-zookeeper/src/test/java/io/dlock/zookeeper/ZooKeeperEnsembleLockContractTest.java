package io.dlock.zookeeper;

import io.dlock.spi.LockBackend;
import io.dlock.testkit.LockContractTest;
import io.dlock.testkit.ServerControl;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.test.InstanceSpec;

/**
 * The contract suite against a 3-node ZooKeeper ensemble in the test JVM. Each client connects to
 * all three members, so its requests go through followers and the leader's quorum writes.
 */
class ZooKeeperEnsembleLockContractTest extends LockContractTest {
  private static final String ROOT = "/dlock-ensemble-contract";

  @Override
  protected LockBackend newBackend() {
    return ZooKeeperLockBackend.connect(
        ZooKeeperTestServers.settings(ZooKeeperTestServers.cluster().getConnectString(), ROOT));
  }

  @Override
  protected LockBackend newBackendForUnreachableServer() {
    return ZooKeeperLockBackend.connect(
        ZooKeeperLockSettings.of(
                "127.0.0.1:"
                    + InstanceSpec.getRandomPort()
                    + ",127.0.0.1:"
                    + InstanceSpec.getRandomPort()
                    + ",127.0.0.1:"
                    + InstanceSpec.getRandomPort())
            .withConnectionTimeout(Duration.ofSeconds(1)));
  }

  @Override
  protected void deleteLockOnServer(String name) {
    ZooKeeperTestServers.deleteLock(ZooKeeperTestServers.cluster().getConnectString(), ROOT, name);
  }

  @Override
  protected Optional<ServerControl> serverControl() {
    return Optional.of(ZooKeeperTestServers.control(ZooKeeperTestServers.cluster()));
  }
}
