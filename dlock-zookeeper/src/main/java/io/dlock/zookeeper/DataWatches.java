package io.dlock.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes back a data watch that this client set and no longer needs. The client keeps every watcher
 * object it registered until its node changes or the session ends, one entry per watcher and node:
 * a waiter that was granted or gave up without this leaves its watcher there for as long as the
 * watched node lives, so polling a full semaphore whose permits are held long grew the client's
 * watch table by one entry per holder per attempt.
 */
final class DataWatches {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private DataWatches() {}

  /**
   * Removes {@code watcher} from {@code path} in the background. Locally: the client's entry goes
   * even if the server cannot be reached or no longer has the watch (the server's own watch, one
   * per node and session whatever the watchers, fires once at the node's next change and is gone).
   * Quietly: a watch that fired meanwhile, or was never set (the node was gone), is no error.
   */
  static void remove(CuratorFramework client, Watcher watcher, String path) {
    try {
      client
          .watchers()
          .remove(watcher)
          .ofType(Watcher.WatcherType.Data)
          .locally()
          .quietly()
          .inBackground()
          .forPath(path);
    } catch (Exception e) {
      log.debug("Could not remove the watch on {}: {}", path, e.toString());
    }
  }
}
