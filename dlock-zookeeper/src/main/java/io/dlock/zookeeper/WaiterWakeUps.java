package io.dlock.zookeeper;

import io.dlock.spi.ReleaseListener;
import java.util.Map;
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
 *
 * <p>One registration per lock, owner <em>and acquiring thread</em>: with an owner id, several
 * threads of one client can wait for one lock as the same owner, and one of them being granted the
 * lock or giving up must not unregister the others, which would then sleep through a session
 * change. The core makes every attempt of one acquisition, and its abandon, on the acquiring thread
 * (a thread of its own for an asynchronous acquisition), so the thread tells the acquisitions of
 * one owner apart.
 */
final class WaiterWakeUps {
  private static final Logger log = LoggerFactory.getLogger(WaiterWakeUps.class);

  private final Map<Waiting, Registration> waiting = new ConcurrentHashMap<>();

  private record Waiting(String lockName, String owner, Thread thread) {}

  /** One attempt's registration; a later attempt of the same acquisition replaces it. */
  static final class Registration {
    private final Waiting key;

    private Registration(Waiting key) {
      this.key = key;
    }
  }

  /** {@code owner} asks for {@code lockName} on the calling thread. */
  Registration asked(String lockName, String owner) {
    Waiting key = new Waiting(lockName, owner, Thread.currentThread());
    Registration registration = new Registration(key);
    waiting.put(key, registration);
    return registration;
  }

  /**
   * The attempt of {@code registration} was granted the lock. Only that attempt's registration
   * goes: a grant that arrives late, after its thread gave up and asked again (for the same lock
   * and owner), leaves the new wait registered.
   */
  void granted(Registration registration) {
    waiting.remove(registration.key, registration);
  }

  /** {@code owner} gave up waiting for {@code lockName} on the calling thread. */
  void abandoned(String lockName, String owner) {
    waiting.remove(new Waiting(lockName, owner, Thread.currentThread()));
  }

  /** The number of waits registered; for tests. */
  int size() {
    return waiting.size();
  }

  /**
   * Signals every waiting owner through the release listener of its lock, so that it tries again.
   * An owner whose lock has no listener yet is making its first attempt, after which the core
   * always tries again before it waits.
   */
  void wakeAll(Map<String, ReleaseListener> listeners, String why) {
    int woken = 0;
    for (Waiting w : waiting.keySet()) {
      ReleaseListener listener = listeners.get(w.lockName());
      if (listener == null) {
        continue;
      }
      woken++;
      try {
        listener.released(w.owner());
      } catch (RuntimeException e) {
        log.warn("A release listener of '{}' failed: {}", w.lockName(), e.toString());
      }
    }
    log.debug("Woke {} waiter(s): {}", woken, why);
  }
}
