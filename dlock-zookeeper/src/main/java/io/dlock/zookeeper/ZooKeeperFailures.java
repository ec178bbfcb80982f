package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.Failures;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The exceptions the backend's calls fail with, each naming the ensemble and root: a call that
 * cannot reach ZooKeeper, or that ZooKeeper answered with an error, fails with {@link
 * BackendUnavailableException}.
 */
final class ZooKeeperFailures {
  private final CuratorFramework client;
  private final String description;

  /**
   * @param description the ensemble and root, for messages
   */
  ZooKeeperFailures(CuratorFramework client, String description) {
    this.client = client;
    this.description = description;
  }

  void ensureConnected() {
    if (!client.getZookeeperClient().isConnected()) {
      throw notConnected();
    }
  }

  BackendUnavailableException notConnected() {
    return new BackendUnavailableException("Not connected to ZooKeeper at " + description);
  }

  BackendUnavailableException unavailable(String operation, Throwable e) {
    if (e instanceof BackendUnavailableException b) {
      return b;
    }
    return new BackendUnavailableException(
        "ZooKeeper at " + description + " failed '" + operation + "': " + e, e);
  }

  BackendUnavailableException failed(String operation, KeeperException.Code code) {
    return new BackendUnavailableException(
        "ZooKeeper at " + description + " failed '" + operation + "': " + code);
  }

  /** What a call's future fails with: the backend's own exceptions as they are, others mapped. */
  Throwable failure(String operation, Throwable failure) {
    Throwable cause = Failures.unwrap(failure);
    if (cause instanceof BackendUnavailableException || cause instanceof IllegalStateException) {
      return cause;
    }
    return unavailable(operation, cause);
  }
}
