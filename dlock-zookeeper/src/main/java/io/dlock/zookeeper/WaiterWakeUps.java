package io.dlock.zookeeper;

import io.dlock.spi.ReleaseListener;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes the waiters of this backend when the session that carries their predecessor watches ends.
 *
 * <p>Why: a waiter is told to wait for the release signal of its predecessor's watch. A watch lives
 * in its session: when the session expires, the watch dies without firing (ZooKeeper sends it no
 * node event, only the session's own expiry), and the waiter's queue node goes too. Nothing else
 * would wake the waiter, which would sleep through its whole wait (forever with {@code
 * Lock.lock()}) although the lock is free. So, as Curator's {@code InterProcessMutex} recipe does,
 * every owner that asked for a lock and has neither been granted it nor given up is woken when the
 * session is lost and again when a new session is up; it tries again, and queues anew in the new
 * session.
 *
 * <p>An owner counts as waiting from the moment it asks (not only once it was told to wait), so a
 * session that ends while an attempt is under way still wakes it: the core then tries again rather
 * than sleeping on an answer from the dead session.
 */
final class WaiterWakeUps {
  private static final Logger log = LoggerFactory.getLogger(WaiterWakeUps.class);

  private final Set<Waiting> waiting = ConcurrentHashMap.newKeySet();

  private record Waiting(String lockName, String owner) {}

  /** {@code owner} asked for {@code lockName}. */
  void asked(String lockName, String owner) {
    waiting.add(new Waiting(lockName, owner));
  }

  /** {@code owner} was granted {@code lockName}, or gave up waiting for it. */
  void finished(String lockName, String owner) {
    waiting.remove(new Waiting(lockName, owner));
  }

  /**
   * Signals every waiting owner through the release listener of its lock, so that it tries again.
   * An owner whose lock has no listener yet is making its first attempt, after which the core
   * always tries again before it waits.
   */
  void wakeAll(Map<String, ReleaseListener> listeners, String why) {
    for (Waiting w : waiting) {
      ReleaseListener listener = listeners.get(w.lockName());
      if (listener == null) {
        continue;
      }
      try {
        listener.released(w.owner());
      } catch (RuntimeException e) {
        log.warn("A release listener of '{}' failed: {}", w.lockName(), e.toString());
      }
    }
    log.debug("Woke {} waiter(s): {}", waiting.size(), why);
  }
}
