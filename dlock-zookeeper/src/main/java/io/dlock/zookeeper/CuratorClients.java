package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/** Curator clients made from {@link ZooKeeperLockSettings}, for a backend that owns its client. */
final class CuratorClients {
  private CuratorClients() {}

  /**
   * Starts a client for the ensemble of {@code settings} and waits for the first connection, at
   * most the connection timeout. The copy of the digest password made for it is wiped once passed
   * to the client.
   *
   * @throws BackendUnavailableException if no connection was made within the connection timeout
   *     (the client is closed then)
   */
  static CuratorFramework connect(ZooKeeperLockSettings settings) {
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(settings.connectString())
            .sessionTimeoutMs(toIntMillis(settings.sessionTimeout()))
            .connectionTimeoutMs(toIntMillis(settings.connectionTimeout()))
            .ensembleTracker(settings.followEnsembleChanges())
            // Bounded: at most 3 retries, so a call never outlives the caller's bound by much.
            .retryPolicy(
                new BoundedExponentialBackoffRetry(
                    50, Math.max(50, toIntMillis(settings.connectionTimeout()) / 4), 3));
    char[] password = settings.digestPassword();
    if (settings.aclMode() == ZooKeeperLockSettings.AclMode.DIGEST && password != null) {
      byte[] auth =
          (settings.digestUser() + ":" + new String(password)).getBytes(StandardCharsets.UTF_8);
      java.util.Arrays.fill(password, '\0');
      builder.authorization("digest", auth).aclProvider(creatorOnly());
    } else if (settings.aclMode() == ZooKeeperLockSettings.AclMode.SASL) {
      builder.aclProvider(creatorOnly());
    }
    CuratorFramework client = builder.build();
    client.start();
    boolean connected;
    try {
      connected =
          client.blockUntilConnected(
              toIntMillis(settings.connectionTimeout()), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      client.close();
      throw new BackendUnavailableException(
          "Interrupted while connecting to ZooKeeper at " + settings.connectString(), e);
    }
    if (!connected) {
      client.close();
      throw new BackendUnavailableException(
          "No connection to ZooKeeper at "
              + settings.connectString()
              + " within "
              + settings.connectionTimeout());
    }
    return client;
  }

  private static ACLProvider creatorOnly() {
    return new ACLProvider() {
      @Override
      public List<ACL> getDefaultAcl() {
        return ZooDefs.Ids.CREATOR_ALL_ACL;
      }

      @Override
      public List<ACL> getAclForPath(String path) {
        return ZooDefs.Ids.CREATOR_ALL_ACL;
      }
    };
  }

  private static int toIntMillis(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
  }
}
