package io.dlock.zookeeper;

import io.dlock.spi.LockOwner;
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
 * <p>One registration per lock and <em>acquisition</em>: with an owner id, several acquisitions of
 * one client can wait for one lock as the same owner, and one of them being granted the lock or
 * giving up must not unregister the others, which would then sleep through a session change. The
 * core passes one {@link LockOwner} instance to every attempt and to the abandon of one acquisition
 * and a new one to every other acquisition (see {@link io.dlock.spi.LockBackend#tryAcquire}), so
 * the instance tells the acquisitions of one owner apart, whatever threads their attempts run on
 * (an asynchronous acquisition's attempts run on any of the client's threads).
 */
final class WaiterWakeUps {
  private static final Logger log = LoggerFactory.getLogger(WaiterWakeUps.class);

  private final Map<Waiting, Registration> waiting = new ConcurrentHashMap<>();

  /** A lock and one acquisition's owner instance, compared by identity. */
  private record Waiting(String lockName, LockOwner owner) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Waiting w && w.owner == owner && w.lockName.equals(lockName);
    }

    @Override
    public int hashCode() {
      return 31 * lockName.hashCode() + System.identityHashCode(owner);
    }
  }

  /** One attempt's registration; a later attempt of the same acquisition replaces it. */
  static final class Registration {
    private final Waiting key;

    private Registration(Waiting key) {
      this.key = key;
    }
  }

  /** The acquisition of {@code owner} (this instance) asks for {@code lockName}. */
  Registration asked(String lockName, LockOwner owner) {
    Waiting key = new Waiting(lockName, owner);
    Registration registration = new Registration(key);
    waiting.put(key, registration);
    return registration;
  }

  /**
   * The attempt of {@code registration} was granted the lock. Only that attempt's registration
   * goes: a grant that arrives late, after its acquisition asked again, leaves the new wait
   * registered.
   */
  void granted(Registration registration) {
    waiting.remove(registration.key, registration);
  }

  /** The acquisition of {@code owner} (this instance) gave up waiting for {@code lockName}. */
  void abandoned(String lockName, LockOwner owner) {
    waiting.remove(new Waiting(lockName, owner));
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
        listener.released(w.owner().key());
      } catch (RuntimeException e) {
        log.warn("A release listener of '{}' failed: {}", w.lockName(), e.toString());
      }
    }
    log.debug("Woke {} waiter(s): {}", woken, why);
  }
}
