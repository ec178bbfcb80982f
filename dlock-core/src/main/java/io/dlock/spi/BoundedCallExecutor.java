package io.dlock.spi;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs at most {@code maxConcurrent} tasks at once, the rest waiting in order in an unbounded
 * queue, on threads made only as concurrency needs them and handed the next task most-recently-idle
 * first.
 *
 * <p>Why not a {@link ThreadPoolExecutor} with {@code maxConcurrent} core threads and a linked
 * queue: that pool makes a new thread for each of its first {@code maxConcurrent} tasks, however
 * few run at once, and wakes its idle threads longest-idle first, so a steady trickle of calls
 * cycles through every one of them (each wake a cold thread, each a futex call). Profiled on the
 * ZooKeeper backend with 16 clients, that cost about 700 µs of CPU per lock cycle.
 *
 * <p>How: tasks go to a queue; up to {@code maxConcurrent} drainers each run queued tasks until the
 * queue is empty. Drainers run on a pool with no core threads and a {@link SynchronousQueue}, whose
 * idle threads wait on a stack, so the thread that went idle last takes the next drainer. One small
 * lock guards the queue, the number of drainers and the state together (never held while a task
 * runs), so that a task is accepted only if a drainer will run it or a later {@link #shutdownNow}
 * hands it back: the inner pool is shut down only once the last drainer has left an empty queue. As
 * in a thread pool, an interrupt left by one task is cleared before the next, except while the
 * executor is stopping, and a task's failure goes to the thread's uncaught-exception handler.
 */
final class BoundedCallExecutor extends AbstractExecutorService {
  private static final int RUNNING = 0;
  private static final int SHUTDOWN = 1;
  private static final int STOP = 2;

  private final int maxConcurrent;
  private final ThreadPoolExecutor threads;
  private final ReentrantLock lock = new ReentrantLock();

  // Guarded by lock.
  private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
  private int drainers;

  /** Written under lock; read without it where a stale value is harmless (see drain). */
  private volatile int state = RUNNING;

  BoundedCallExecutor(int maxConcurrent, long keepAlive, TimeUnit unit, ThreadFactory factory) {
    this.maxConcurrent = maxConcurrent;
    this.threads =
        new ThreadPoolExecutor(
            0, Integer.MAX_VALUE, keepAlive, unit, new SynchronousQueue<>(), factory);
  }

  @Override
  public void execute(Runnable task) {
    if (task == null) {
      throw new NullPointerException("task");
    }
    boolean startDrainer;
    lock.lock();
    try {
      if (state != RUNNING) {
        throw new RejectedExecutionException("the executor is shut down");
      }
      tasks.add(task);
      startDrainer = drainers < maxConcurrent;
      if (startDrainer) {
        drainers++;
      }
    } finally {
      lock.unlock();
    }
    if (startDrainer) {
      try {
        // Never rejected: the inner pool is shut down only with no drainer, and this is one.
        threads.execute(this::drain);
      } catch (RuntimeException | Error e) {
        // No thread could be made (out of memory or threads): refuse the task if it is still
        // queued; one that another drainer already took runs.
        if (drainerNotStarted(task)) {
          throw e;
        }
      }
    }
  }

  /** Gives back the slot of a drainer that could not start; true if {@code task} was unqueued. */
  private boolean drainerNotStarted(Runnable task) {
    lock.lock();
    try {
      drainers--;
      boolean removed = false;
      for (Iterator<Runnable> it = tasks.descendingIterator(); it.hasNext(); ) {
        if (it.next() == task) {
          it.remove();
          removed = true;
          break;
        }
      }
      terminateIfDone();
      return removed;
    } finally {
      lock.unlock();
    }
  }

  private void drain() {
    boolean slotGivenBack = false;
    try {
      Runnable task;
      while ((task = nextOrLeave()) != null) {
        // An interrupt left by the last task is not meant for this one, unless the executor is
        // stopping: shutdownNow sets the state before it interrupts, so its interrupt is kept.
        Thread.interrupted();
        if (state == STOP) {
          Thread.currentThread().interrupt();
        }
        runOne(task);
      }
      slotGivenBack = true;
    } finally {
      if (!slotGivenBack) {
        leftAfterFailure(); // a VirtualMachineError from a task: free the slot, then let it go on
      }
    }
  }

  /** The next task, or null after giving back this drainer's slot (queue empty, or stopping). */
  private Runnable nextOrLeave() {
    lock.lock();
    try {
      Runnable task = state == STOP ? null : tasks.poll();
      if (task == null) {
        drainers--;
        terminateIfDone();
      }
      return task;
    } finally {
      lock.unlock();
    }
  }

  /** A drainer ended by an error: gives back its slot and starts another for the queued tasks. */
  private void leftAfterFailure() {
    boolean replace;
    lock.lock();
    try {
      replace = state != STOP && !tasks.isEmpty();
      if (!replace) {
        drainers--;
        terminateIfDone();
      }
    } finally {
      lock.unlock();
    }
    if (replace) {
      try {
        threads.execute(this::drain); // the slot passes to the new drainer
      } catch (RuntimeException | Error e) {
        lock.lock();
        try {
          drainers--;
          terminateIfDone();
        } finally {
          lock.unlock();
        }
      }
    }
  }

  private static void runOne(Runnable task) {
    try {
      task.run();
    } catch (Throwable e) { // checked exceptions too: code can throw them undeclared
      if (e instanceof VirtualMachineError fatal) {
        throw fatal;
      }
      // A plain Runnable's failure goes where a pool thread's would; the drainer goes on.
      Thread current = Thread.currentThread();
      try {
        current.getUncaughtExceptionHandler().uncaughtException(current, e);
      } catch (Throwable ignored) {
        // a handler that fails must not stop the calls queued behind this one
      }
    }
  }

  /** Under lock: shuts the inner pool down once shut down, with no drainer and nothing queued. */
  private void terminateIfDone() {
    if (state != RUNNING && drainers == 0 && tasks.isEmpty()) {
      threads.shutdown();
    }
  }

  @Override
  public void shutdown() {
    lock.lock();
    try {
      if (state == RUNNING) {
        state = SHUTDOWN; // tasks already queued still run
      }
      terminateIfDone();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<Runnable> shutdownNow() {
    List<Runnable> notRun;
    lock.lock();
    try {
      state = STOP;
      notRun = new ArrayList<>(tasks);
      tasks.clear();
      terminateIfDone();
    } finally {
      lock.unlock();
    }
    threads.shutdownNow(); // interrupts the running tasks
    return notRun;
  }

  @Override
  public boolean isShutdown() {
    return state != RUNNING;
  }

  @Override
  public boolean isTerminated() {
    return threads.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return threads.awaitTermination(timeout, unit);
  }

  /** Threads alive now, idle or not (for tests). */
  int threadCount() {
    return threads.getPoolSize();
  }
}
