package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.LockOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** {@code zk://} URIs through {@link LockClients}, and inspection details specific to ZooKeeper. */
class ZooKeeperBackendProviderTest {

  @Test
  void aZkUriConnectsThroughLockClientsToTheRootItNames() throws Exception {
    TestingServer server = ZooKeeperTestServers.single();
    String root = "/dlock-uri-" + UUID.randomUUID().toString().substring(0, 8);
    try (LockClient client =
            LockClients.connect(
                "zk://127.0.0.1:" + server.getPort() + root,
                Map.of("sessionTimeout", "PT4S"),
                LockClientOptions.defaults());
        CuratorFramework admin = ZooKeeperTestServers.admin(server.getConnectString())) {
      try (Lease lease = client.lock("via/uri").tryAcquire().orElseThrow()) {
        List<String> nodes = ZooKeeperTestServers.nodesUnder(admin, root);
        assertThat(nodes).hasSize(2).first().isEqualTo(new LockPaths(root).lockPath("via/uri"));
        assertThat(client.inspect("via/*"))
            .singleElement()
            .satisfies(i -> assertThat(i.fencingToken()).isEqualTo(lease.fencingToken()));
      }
      await()
          .atMost(millis(10_000))
          .untilAsserted(() -> assertThat(ZooKeeperTestServers.nodesUnder(admin, root)).isEmpty());
    }
  }

  @Test
  void uriPartsAndPropertiesBecomeSettings() {
    ZooKeeperLockSettings plain =
        ZooKeeperBackendProvider.settings("zk://zk1:2181,ZK2,[::1]:2182", Map.of());
    assertThat(plain.connectString()).isEqualTo("zk1:2181,zk2:2181,[::1]:2182");
    assertThat(plain.rootPath()).isEqualTo(ZooKeeperLockSettings.DEFAULT_ROOT_PATH);
    assertThat(ZooKeeperBackendProvider.settings("zk://zk1:2181/", Map.of()).rootPath())
        .isEqualTo(ZooKeeperLockSettings.DEFAULT_ROOT_PATH);
    ZooKeeperLockSettings full =
        ZooKeeperBackendProvider.settings(
            "zk://zk1:2181/apps/locks",
            Map.of(
                "sessionTimeout", "PT12S",
                "connectionTimeout", "1500",
                "username", "app",
                "password", "s3cret",
                "unrelated", "ignored"));
    assertThat(full.rootPath()).isEqualTo("/apps/locks");
    assertThat(full.sessionTimeout()).isEqualTo(Duration.ofSeconds(12));
    assertThat(full.connectionTimeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(full.aclMode()).isEqualTo(ZooKeeperLockSettings.AclMode.DIGEST);
    assertThat(full.digestUser()).isEqualTo("app");
    assertThat(new ZooKeeperBackendProvider().supports("zk://a:1")).isTrue();
    assertThat(new ZooKeeperBackendProvider().supports("redis://a:1")).isFalse();
  }

  @Test
  void badUrisAreRefusedNamingTheProblem() {
    assertBad("zk://", "at least one host");
    assertBad("zk:///dlock", "at least one host");
    assertBad("zk://zk1:notaport/dlock", "invalid port 'notaport'");
    assertBad("zk://zk1:70000", "invalid port '70000'");
    assertBad("zk://zk1:2181,,zk2:2181", "invalid ZooKeeper host '(empty)'");
    assertBad("zk://zk 1:2181", "invalid ZooKeeper host");
    assertBad("zk://[::1:2181", "unclosed '['");
    assertBad("zk://zk1:2181/locks/", "rootPath");
    assertBad("zk://zk1:2181/a/../b", "rootPath");
    assertBad("zk://zk1:2181/locks?sessionTimeout=1", "no query");
    assertBad("zk://app:s3cret@zk1:2181/locks", "no credentials");
    assertThatThrownBy(() -> ZooKeeperBackendProvider.settings("zk://app:s3cret@zk1/x", Map.of()))
        .hasMessageNotContaining("s3cret");
    assertThatThrownBy(
            () ->
                ZooKeeperBackendProvider.settings(
                    "zk://zk1:2181", Map.of("sessionTimeout", "soon")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sessionTimeout");
    assertThatThrownBy(
            () -> ZooKeeperBackendProvider.settings("zk://zk1:2181", Map.of("acl", "digest")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("acl=digest needs username and password");
    // Through LockClients, so that the provider is found by the ServiceLoader.
    assertThatThrownBy(
            () -> LockClients.connect("zk://zk1:0/x", Map.of(), LockClientOptions.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid port '0'");
  }

  private static void assertBad(String uri, String problem) {
    assertThatThrownBy(() -> ZooKeeperBackendProvider.settings(uri, Map.of()))
        .as(uri)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(problem);
  }

  @Test
  void digestCredentialsInPropertiesProtectTheNodes() throws Exception {
    TestingServer server = ZooKeeperTestServers.single();
    String root = "/dlock-uri-acl-" + UUID.randomUUID().toString().substring(0, 8);
    try (LockClient client =
            LockClients.connect(
                "zk://127.0.0.1:" + server.getPort() + root,
                Map.of("username", "app", "password", "s3cret"),
                LockClientOptions.defaults());
        CuratorFramework admin = ZooKeeperTestServers.admin(server.getConnectString())) {
      try (Lease lease = client.lock("guarded").tryAcquire().orElseThrow()) {
        assertThat(lease.isValid()).isTrue();
        assertThatThrownBy(
                () -> admin.getChildren().forPath(new LockPaths(root).lockPath("guarded")))
            .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
      }
    }
  }

  @Test
  void inspectionShowsAnOwnerIdsHoldCountAndForcedReleaseReachesTheNextWaiter() throws Exception {
    TestingServer server = ZooKeeperTestServers.single();
    String root = "/dlock-inspect-" + UUID.randomUUID().toString().substring(0, 8);
    String uri = "zk://127.0.0.1:" + server.getPort() + root;
    LockClientOptions options = LockClientOptions.defaults();
    try (LockClient holder = LockClients.connect(uri, Map.of(), options);
        LockClient waiter = LockClients.connect(uri, Map.of(), options);
        LockClient admin = LockClients.connect(uri, Map.of(), options)) {
      Instant before = Instant.now().minusSeconds(1);
      LockOptions shared = LockOptions.defaults().withOwnerId("batch-7");
      Lease first = holder.lock("jobs/[7]*", shared).tryAcquire().orElseThrow();
      Lease second = holder.lock("jobs/[7]*", shared).tryAcquire().orElseThrow();
      Lease other = holder.lock("jobs/8").tryAcquire().orElseThrow();
      List<LockInfo> infos = admin.inspect("jobs/?7]*");
      assertThat(infos)
          .singleElement()
          .satisfies(
              info -> {
                assertThat(info.name()).isEqualTo("jobs/[7]*");
                assertThat(info.holder()).isEqualTo("owner id batch-7");
                assertThat(info.holds()).isEqualTo(2);
                assertThat(info.fencingToken()).isEqualTo(first.fencingToken());
                assertThat(info.heldSince()).isAfter(before).isBefore(Instant.now().plusSeconds(1));
                assertThat(info.leaseRemaining()).isNull();
              });
      assertThat(admin.inspect("jobs/*"))
          .extracting(LockInfo::name)
          .containsExactly("jobs/8", "jobs/[7]*");
      assertThat(admin.inspect("*")).hasSize(2);
      assertThat(admin.inspect("jobs")).isEmpty();

      // A queued waiter gets the lock when the administrator breaks it.
      java.util.concurrent.CompletableFuture<Lease> next =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> waiter.lock("jobs/8").acquire(millis(20_000)));
      await()
          .atMost(millis(10_000))
          .until(() -> admin.inspect("jobs/8").size() == 1 && queued(server, root, "jobs/8") == 2);
      assertThat(admin.forceRelease("jobs/8"))
          .hasValueSatisfying(i -> assertThat(i.fencingToken()).isEqualTo(other.fencingToken()));
      Lease taken = next.get(millis(10_000).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      assertThat(taken.fencingToken()).isGreaterThan(other.fencingToken());
      assertThat(admin.inspect("jobs/8"))
          .singleElement()
          .satisfies(i -> assertThat(i.fencingToken()).isEqualTo(taken.fencingToken()));
      taken.release();
      second.release();
      first.release();
      assertThat(admin.inspect("jobs/*")).isEmpty();
    }
  }

  private static int queued(TestingServer server, String root, String lockName) throws Exception {
    try (CuratorFramework admin = ZooKeeperTestServers.admin(server.getConnectString())) {
      return admin.getChildren().forPath(new LockPaths(root).lockPath(lockName)).size();
    }
  }
}
