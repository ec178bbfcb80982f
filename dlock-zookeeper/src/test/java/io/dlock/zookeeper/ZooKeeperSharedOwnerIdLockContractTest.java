package io.dlock.zookeeper;

import io.dlock.spi.LockBackend;

/**
 * The contract suite with owner ids shared across clients ({@code ownerIdsSharedAcrossClients}):
 * the kit's cross-client owner-id tests, skipped on the default per-client mode, run here, among
 * them that a lost grant's late release or renewal never reaches a newer grant of its owner id
 * taken through another client (issue 14, item 1).
 */
class ZooKeeperSharedOwnerIdLockContractTest extends ZooKeeperLockContractTest {
  private static final String ROOT = "/dlock-contract-shared";

  @Override
  protected LockBackend newBackend() {
    return ZooKeeperLockBackend.connect(
        ZooKeeperTestServers.settings(ZooKeeperTestServers.single().getConnectString(), ROOT)
            .withOwnerIdsSharedAcrossClients(true));
  }

  @Override
  protected void deleteLockOnServer(String name) {
    ZooKeeperTestServers.deleteLock(ZooKeeperTestServers.single().getConnectString(), ROOT, name);
  }
}
