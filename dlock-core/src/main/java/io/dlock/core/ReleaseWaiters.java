package io.dlock.core;

import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseSignals;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads of this client that wait for a lock, per name, in arrival order. The backend's
 * release signal for a name is watched while at least one local thread waits for it, and each
 * signal wakes only the oldest waiter: a release costs one retry per client, not one per waiting
 * thread (no herd).
 *
 * <p>A waiter that leaves without the lock (timeout, interrupt, error) passes a signal on, so that
 * a release is never swallowed.
 */
final class ReleaseWaiters {
  private static final Logger log = LoggerFactory.getLogger(ReleaseWaiters.class);

  /** The backend's release signals; null if it has none (waiters then back off and retry). */
  private final @Nullable ReleaseSignals signals;

  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, Queue> queues = new HashMap<>();

  ReleaseWaiters(@Nullable ReleaseSignals signals) {
    this.signals = signals;
  }

  /**
   * Joins the queue of {@code lockName} as {@code owner}, watching its release signal if this is
   * the first waiter.
   *
   * @param onSignal for a waiter without a thread (an asynchronous acquisition): run, without
   *     blocking, when it is signalled; null for the calling thread, which {@link Waiter#await}s
   */
  Waiter join(String lockName, LockOwner owner, @Nullable Runnable onSignal) {
    lock.lock();
    try {
      Queue queue = queues.get(lockName);
      if (queue == null) {
        queue = new Queue(lockName);
        queues.put(lockName, queue);
        watch(queue);
      } else if (queue.watching != null && queue.watching.isCompletedExceptionally()) {
        // A failed subscription must not fail every later waiter: try again.
        unwatch(lockName);
        watch(queue);
      }
      Waiter waiter =
          new Waiter(
              queue, onSignal == null ? Thread.currentThread() : null, onSignal, owner.key());
      queue.waiters.addLast(waiter);
      return waiter;
    } finally {
      lock.unlock();
    }
  }

  private void watch(Queue queue) {
    if (signals == null) {
      return; // only local signals (a release by this client) wake a waiter before its backoff
    }
    CompletableFuture<Void> watching;
    try {
      watching = signals.watchReleases(queue.lockName, queue::signal);
    } catch (RuntimeException e) {
      watching = CompletableFuture.failedFuture(e);
    }
    queue.watching = watching;
  }

  private void unwatch(String lockName) {
    if (signals == null) {
      return;
    }
    try {
      signals.unwatchReleases(lockName);
    } catch (RuntimeException e) {
      log.debug("Could not stop watching releases of '{}': {}", lockName, e.toString());
    }
  }

  /**
   * Leaves the queue; stops watching when it was the last waiter. A waiter that leaves without the
   * lock always wakes the next one: it may have consumed a release signal (or been about to), and
   * one needless retry is cheaper than a waiter sleeping through a free lock.
   */
  void leave(Waiter waiter, boolean acquired) {
    Queue queue = waiter.queue;
    boolean unwatch = false;
    lock.lock();
    try {
      queue.waiters.remove(waiter);
      if (queue.waiters.isEmpty() && queues.get(queue.lockName) == queue) {
        queues.remove(queue.lockName);
        unwatch = true;
      }
      if (unwatch) {
        unwatch(queue.lockName);
      }
    } finally {
      lock.unlock();
    }
    if (!acquired) {
      queue.signalOne();
    }
  }

  /**
   * Wakes every waiting thread, of every lock: the client is closing, and each finds that out when
   * it wakes. Asynchronous waiters are not run: close ends them itself.
   */
  void wakeThreadsForClose() {
    List<Queue> all;
    lock.lock();
    try {
      all = List.copyOf(queues.values());
    } finally {
      lock.unlock();
    }
    for (Queue queue : all) {
      for (Waiter waiter : queue.waiters) {
        if (waiter.thread != null) {
          waiter.signal();
        }
      }
    }
  }

  /** Wakes the oldest local waiter of {@code lockName}, if any. */
  void signal(String lockName) {
    Queue queue;
    lock.lock();
    try {
      queue = queues.get(lockName);
    } finally {
      lock.unlock();
    }
    if (queue != null) {
      queue.signalOne();
    }
  }

  static final class Queue {
    final String lockName;
    final ConcurrentLinkedDeque<Waiter> waiters = new ConcurrentLinkedDeque<>();
    volatile @Nullable CompletableFuture<Void> watching;

    Queue(String lockName) {
      this.lockName = lockName;
    }

    void signalOne() {
      Waiter head = waiters.peekFirst();
      if (head != null) {
        head.signal();
      }
    }

    /**
     * Wakes the waiter whose owner key is {@code ownerKey} if it waits here, else the oldest
     * waiter.
     */
    void signal(@Nullable String ownerKey) {
      if (ownerKey != null) {
        for (Waiter waiter : waiters) {
          if (waiter.ownerKey.equals(ownerKey)) {
            waiter.signal();
            return;
          }
        }
      }
      signalOne();
    }
  }

  /** One waiting acquisition: a parked thread, or an asynchronous acquisition's callback. */
  static final class Waiter {
    final Queue queue;
    private final @Nullable Thread thread;
    private final @Nullable Runnable onSignal;
    final String ownerKey;
    volatile boolean signalled;

    Waiter(Queue queue, @Nullable Thread thread, @Nullable Runnable onSignal, String ownerKey) {
      this.queue = queue;
      this.thread = thread;
      this.onSignal = onSignal;
      this.ownerKey = ownerKey;
    }

    CompletableFuture<Void> watching() {
      CompletableFuture<Void> w = queue.watching;
      return w == null ? CompletableFuture.completedFuture(null) : w;
    }

    void signal() {
      signalled = true;
      if (thread != null) {
        LockSupport.unpark(thread);
      } else if (onSignal != null) {
        onSignal.run();
      }
    }

    /** Clears the signal before an attempt: a signal that arrives during it forces a retry. */
    void clearSignal() {
      signalled = false;
    }

    /**
     * Parks until signalled, interrupted, or {@code nanos} pass (spurious wake-ups are absorbed).
     *
     * @return false if the thread was interrupted
     */
    boolean await(long nanos) {
      // The system clock on purpose: this is how long the thread parks, which parkNanos measures
      // in real time whatever the client's clock says; deadlines are the caller's, on its clock.
      long until = System.nanoTime() + nanos;
      while (!signalled) {
        if (Thread.currentThread().isInterrupted()) {
          return false;
        }
        long left = until - System.nanoTime();
        if (left <= 0) {
          return true;
        }
        LockSupport.parkNanos(this, left);
      }
      return !Thread.currentThread().isInterrupted();
    }
  }
}
