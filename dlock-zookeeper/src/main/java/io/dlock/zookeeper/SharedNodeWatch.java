package io.dlock.zookeeper;

import java.util.function.Consumer;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * A persistent watch on a node of this owner id created by another client (session): it stays
 * registered through the count changes of other holders, and its deletion (its session ended, or a
 * forced release) marks this client's holds on it lost at once, instead of at the next renewal.
 */
final class SharedNodeWatch implements Watcher {
  final LockAndOwner key;
  final QueueEntry entry;
  final String path;
  volatile boolean gone;
  private final Consumer<SharedNodeWatch> onDeleted;

  /**
   * @param onDeleted reports the loss of this client's holds on the node, if it still has any
   */
  SharedNodeWatch(
      LockAndOwner key, QueueEntry entry, String path, Consumer<SharedNodeWatch> onDeleted) {
    this.key = key;
    this.entry = entry;
    this.path = path;
    this.onDeleted = onDeleted;
  }

  @Override
  public void process(WatchedEvent event) {
    if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
      gone = true; // before the check below: see JoinedHolds#join
      onDeleted.accept(this);
    }
  }
}
