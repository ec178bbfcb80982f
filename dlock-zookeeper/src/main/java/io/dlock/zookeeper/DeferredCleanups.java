package io.dlock.zookeeper;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The clean-ups of waits (deleting the node of a wait that ended without a grant) that failed for
 * want of a connection, kept to be retried once the connection is back: one instance for the lock
 * queue, one for the permits.
 *
 * <p>Why a generation: a clean-up fails (not connected, or Curator ran out of retries), and only
 * then is kept here. A reconnection handled between the failure and the keeping finds nothing to
 * retry, and no later one may come: the waiter node then stays as long as the session lives, and if
 * it heads its queue, nobody is ever granted. So a clean-up notes the generation before it starts
 * ({@link #generation}); a reconnection moves the generation and takes the kept clean-ups in one
 * step (under {@link #lock}); a failed clean-up that finds the generation moved since it started is
 * not kept but retried at once. That retry notes the new generation, so it is retried again only
 * after yet another reconnection: one retry per reconnection, never a hot loop.
 *
 * <p>The lock is held only to read and change the kept keys and the counters; the retries run
 * outside it.
 */
final class DeferredCleanups {
  private final Consumer<LockAndOwner> retry;
  private final ReentrantLock lock = new ReentrantLock();

  // All three guarded by lock.
  private final Set<LockAndOwner> kept = new HashSet<>();
  private long generation;

  /** The generation of the last session loss: clean-ups started before it have nothing left. */
  private long lostAt = -1;

  private volatile @Nullable Consumer<LockAndOwner> beforeKeep;

  /**
   * @param retry starts the clean-up of a key again, in the background; it notes the generation
   *     itself and reports a new failure to {@link #failed}
   */
  DeferredCleanups(Consumer<LockAndOwner> retry) {
    this.retry = retry;
  }

  /** The generation to note before a clean-up starts; see {@link #failed}. */
  long generation() {
    lock.lock();
    try {
      return generation;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The clean-up of {@code key}, started in {@code startedIn}, failed for want of a connection:
   * kept for the next reconnection, or retried now if one was handled since it started, or dropped
   * if the session was lost since (its node went with the session).
   */
  void failed(LockAndOwner key, long startedIn) {
    Consumer<LockAndOwner> hook = beforeKeep;
    if (hook != null) {
      hook.accept(key);
    }
    lock.lock();
    try {
      if (generation == startedIn) {
        kept.add(key);
        return;
      }
      if (lostAt > startedIn) {
        return;
      }
    } finally {
      lock.unlock();
    }
    retry.accept(key);
  }

  /** The connection is back with the same session: retries every kept clean-up. */
  void reconnected() {
    List<LockAndOwner> due;
    lock.lock();
    try {
      generation++;
      due = List.copyOf(kept);
      kept.clear();
    } finally {
      lock.unlock();
    }
    due.forEach(retry);
  }

  /** The session ended: its nodes are gone, so nothing kept is left to clean up. */
  void sessionLost() {
    lock.lock();
    try {
      generation++;
      lostAt = generation;
      kept.clear();
    } finally {
      lock.unlock();
    }
  }

  /** Kept clean-ups; for tests. */
  int size() {
    lock.lock();
    try {
      return kept.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * For tests: {@code hook} runs with the key of a failed clean-up before it is kept or retried, so
   * that a test can have a reconnection handled exactly between the failure and the keeping (the
   * window this class closes), which no timing can hit reliably.
   */
  void beforeKeep(@Nullable Consumer<LockAndOwner> hook) {
    this.beforeKeep = hook;
  }
}
