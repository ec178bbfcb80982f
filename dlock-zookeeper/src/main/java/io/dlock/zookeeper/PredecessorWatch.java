package io.dlock.zookeeper;

import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * A watch on a waiter's predecessor. ZooKeeper notifies a watch once: after that ({@code fired}) it
 * no longer stands for a signal to come, whatever a listing says of its node.
 */
final class PredecessorWatch {
  final String path;
  @Nullable Watcher watcher; // set once, before the watch is registered
  volatile boolean fired;

  PredecessorWatch(String path) {
    this.path = path;
  }
}
