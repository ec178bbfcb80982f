package io.dlock.zookeeper;

import io.dlock.spi.ReleaseListener;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquisitions of permits that wait through this client, and the release signals that wake
 * them: each has one watcher, set by its attempts on its predecessor in the queue or, at the head,
 * on the holders; its notification signals exactly that waiter ({@link
 * ReleaseListener#released(String)} with its owner key), as the lock queue does.
 *
 * <p>A watcher of an acquisition that was granted or gave up signals nothing, and is taken out of
 * the client's watch table on every node it was set on ({@link DataWatches}): the client would
 * otherwise keep it until the node changes, and every attempt of a poll on a full semaphore added
 * one per holder. One watcher per acquisition, reused by its attempts, so a watch set again on the
 * same node is not a second registration.
 *
 * <p>Watches die with their session without firing, so, as for locks ({@link WaiterWakeUps}), every
 * waiting acquisition is woken when the session is lost and when the connection is back; it tries
 * again and queues anew.
 */
final class PermitWaiters {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final Map<String, ReleaseListener> listeners = new ConcurrentHashMap<>();
  private final Map<LockAndOwner, Watch> waiting = new ConcurrentHashMap<>();

  PermitWaiters(CuratorFramework client) {
    this.client = client;
  }

  /** The core's listener of {@code semaphore}'s release signals. */
  void listen(String semaphore, ReleaseListener listener) {
    listeners.put(semaphore, listener);
  }

  void unlisten(String semaphore) {
    listeners.remove(semaphore);
  }

  /** The acquisition of {@code key} asks: it waits (and is woken) until {@link #done}. */
  void asked(LockAndOwner key) {
    waiting.computeIfAbsent(key, Watch::new);
  }

  /**
   * The watcher of {@code key}, the same for all its attempts, or null if it no longer waits (it
   * gave up while an attempt was under way).
   */
  @Nullable Watch watcher(LockAndOwner key) {
    return waiting.get(key);
  }

  /**
   * The acquisition of {@code key} was granted or gave up: its watches signal nothing more, and are
   * removed.
   */
  void done(LockAndOwner key) {
    Watch watch = waiting.remove(key);
    if (watch != null) {
      watch.end();
    }
  }

  /** Signals every waiting acquisition: their watches may have died with a session. */
  void wakeAll(String why) {
    List<LockAndOwner> all = List.copyOf(waiting.keySet());
    for (LockAndOwner key : all) {
      signal(key);
    }
    if (!all.isEmpty()) {
      log.debug("Woke {} permit waiter(s): {}", all.size(), why);
    }
  }

  private void signal(LockAndOwner key) {
    ReleaseListener listener = listeners.get(key.lockName());
    if (listener == null) {
      return; // a first attempt: the core tries again before it waits
    }
    try {
      listener.released(key.owner());
    } catch (RuntimeException e) {
      log.warn("A permit release listener of '{}' failed: {}", key.lockName(), e.toString());
    }
  }

  /**
   * The watcher of one acquisition. An attempt calls {@link #setting} before the request that sets
   * it on a node and {@link #settled} once answered; {@link #end} removes it from every node noted.
   * Either the end sees the node noted, or the attempt sees the end after its answer: the watch is
   * removed either way (a removal that came before the watch was set is repeated then).
   */
  final class Watch implements Watcher {
    private final LockAndOwner key;

    /** The nodes it was set on that have not notified it yet. */
    private final Set<String> paths = ConcurrentHashMap.newKeySet();

    private volatile boolean ended;

    Watch(LockAndOwner key) {
      this.key = key;
    }

    /** Before the request that sets this watcher on {@code path}. */
    void setting(String path) {
      paths.add(path);
    }

    /** The request that set it on {@code path} was answered (or failed). */
    void settled(String path) {
      if (ended) {
        DataWatches.remove(client, this, path);
      }
    }

    private void end() {
      ended = true; // before the nodes are read: see the class comment
      for (String path : List.copyOf(paths)) {
        paths.remove(path);
        DataWatches.remove(client, this, path);
      }
    }

    @Override
    public void process(WatchedEvent event) {
      if (event.getType() == Event.EventType.None) {
        return; // a connection change: the session wake-ups cover it
      }
      String path = event.getPath();
      if (path != null) {
        paths.remove(path); // a data watch notifies once: nothing left to remove there
      }
      if (waiting.get(key) == this) {
        signal(key);
      }
    }
  }
}
