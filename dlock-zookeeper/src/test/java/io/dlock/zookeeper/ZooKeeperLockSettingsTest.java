package io.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;

class ZooKeeperLockSettingsTest {

  @Test
  void badSettingsNameTheParameterAndTheAllowedRange() {
    assertThatThrownBy(() -> ZooKeeperLockSettings.of(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("connectString");
    ZooKeeperLockSettings settings = ZooKeeperLockSettings.of("127.0.0.1:2181");
    assertThatThrownBy(() -> settings.withRootPath("dlock"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rootPath");
    assertThatThrownBy(() -> settings.withRootPath("/a/../b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rootPath");
    assertThatThrownBy(() -> settings.withSessionTimeout(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sessionTimeout")
        .hasMessageContaining("PT0.1S");
    assertThatThrownBy(() -> settings.withConnectionTimeout(Duration.ofHours(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("connectionTimeout")
        .hasMessageContaining("PT10M");
    assertThatThrownBy(() -> settings.withDigestAcl("a:b", "pw".toCharArray()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("user");
    assertThat(settings.rootPath()).isEqualTo(ZooKeeperLockSettings.DEFAULT_ROOT_PATH);
  }

  @Test
  void theConnectStringIsFollowedAsGiven_unlessAskedToFollowTheEnsemble() {
    Properties p = new Properties();
    p.setProperty("zk.connectString", "127.0.0.1:2181");
    assertThat(ZooKeeperLockSettings.fromProperties(p, "zk.").followEnsembleChanges()).isFalse();
    p.setProperty("zk.followEnsembleChanges", "TRUE");
    assertThat(ZooKeeperLockSettings.fromProperties(p, "zk.").followEnsembleChanges()).isTrue();
    assertThat(ZooKeeperLockSettings.fromProperties(p, "zk.").withRootPath("/x").toString())
        .contains("followEnsembleChanges");
    p.setProperty("zk.followEnsembleChanges", "sometimes");
    assertThatThrownBy(() -> ZooKeeperLockSettings.fromProperties(p, "zk."))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("zk.followEnsembleChanges must be true or false");
  }

  @Test
  void propertiesCarryTheCredentialsNotTheCode() {
    Properties p = new Properties();
    p.setProperty("zk.connectString", "127.0.0.1:2181");
    p.setProperty("zk.rootPath", "/locks");
    p.setProperty("zk.sessionTimeout", "PT10S");
    p.setProperty("zk.connectionTimeout", "2500");
    p.setProperty("zk.acl", "digest");
    p.setProperty("zk.username", "app");
    p.setProperty("zk.password", "secret");
    ZooKeeperLockSettings settings = ZooKeeperLockSettings.fromProperties(p, "zk.");
    assertThat(settings.rootPath()).isEqualTo("/locks");
    assertThat(settings.sessionTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(settings.connectionTimeout()).isEqualTo(Duration.ofMillis(2500));
    assertThat(settings.aclMode()).isEqualTo(ZooKeeperLockSettings.AclMode.DIGEST);
    assertThat(settings.toString()).doesNotContain("secret");
    p.setProperty("zk.acl", "kerberos");
    assertThatThrownBy(() -> ZooKeeperLockSettings.fromProperties(p, "zk."))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("zk.acl");
  }

  @Test
  void digestAclKeepsOtherClientsAwayFromTheLockNodes() throws Exception {
    String connect = ZooKeeperTestServers.single().getConnectString();
    String root = "/dlock-acl-" + UUID.randomUUID().toString().substring(0, 8);
    ZooKeeperLockSettings settings =
        ZooKeeperTestServers.settings(connect, root).withDigestAcl("app", "s3cret".toCharArray());
    try (LockClient client = ZooKeeperLocks.newClient(settings, LockClientOptions.defaults());
        CuratorFramework stranger = ZooKeeperTestServers.admin(connect)) {
      try (Lease lease = client.lock("guarded").tryAcquire().orElseThrow()) {
        String parent = new LockPaths(root).lockPath("guarded");
        assertThatThrownBy(() -> stranger.getACL().forPath(parent))
            .isInstanceOf(KeeperException.NoAuthException.class);
        try (CuratorFramework colleague =
            CuratorFrameworkFactory.builder()
                .connectString(connect)
                .retryPolicy(new RetryOneTime(100))
                .authorization("digest", "app:s3cret".getBytes(StandardCharsets.UTF_8))
                .build()) {
          colleague.start();
          List<ACL> acl = colleague.getACL().forPath(parent);
          assertThat(acl)
              .singleElement()
              .satisfies(
                  a -> {
                    assertThat(a.getId().getScheme()).isEqualTo("digest");
                    assertThat(a.getId().getId()).startsWith("app:");
                  });
          assertThat(colleague.getChildren().forPath(parent)).hasSize(1);
        }
        assertThatThrownBy(() -> stranger.getChildren().forPath(parent))
            .isInstanceOf(KeeperException.NoAuthException.class);
        assertThatThrownBy(() -> stranger.create().forPath(parent + "/intruder"))
            .isInstanceOf(KeeperException.NoAuthException.class);
        assertThat(lease.isValid()).isTrue();
      }
    }
  }
}
