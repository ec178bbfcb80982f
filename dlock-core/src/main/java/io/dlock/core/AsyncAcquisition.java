package io.dlock.core;

import io.dlock.Lease;
import io.dlock.LockEventListener;
import io.dlock.LockOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * An asynchronous acquisition, run in steps over the same methods of {@link Acquisitions} as a
 * blocking one: a step makes one attempt (or the first one, or joins the waiters) on one of the
 * client's acquisition threads; between steps it holds no thread at all, only a place among the
 * lock's waiters and a timer task. A release signal, the timer or a cancellation starts the next
 * step. So ten thousand waiting acquisitions cost ten thousand small objects, not threads.
 *
 * <p>Cancelling the future (or closing the client) ends the wait: a step in progress is interrupted
 * as a blocking caller would be, and what it was answered is released.
 */
final class AsyncAcquisition extends CompletableFuture<Lease> {
  private static final int RUNNING = 0; // a step is queued or running
  private static final int WAITING = 1; // no step: waiting for a signal, the timer or a cancel
  private static final int DONE = 2;

  private final Acquisitions acquisitions;
  private final CoreLockClient client;
  private final String name;
  private final LockOptions lockOptions;
  private final long waitNanos;
  private final Object holder = new Object();
  private final Executor steps;
  private final ScheduledExecutorService timer;
  private final long startedAt;

  private final AtomicInteger state = new AtomicInteger(RUNNING);
  private Acquisitions.@Nullable Acquisition acquisition; // set by the first step
  private volatile @Nullable Future<?> wakeUp;
  private volatile boolean closing;

  /** Guards {@link #runner}: a cancellation interrupts only the thread of a step still running. */
  private final ReentrantLock runnerLock = new ReentrantLock();

  private @Nullable Thread runner;

  AsyncAcquisition(
      CoreLockClient client,
      Acquisitions acquisitions,
      String name,
      LockOptions lockOptions,
      long waitNanos,
      Executor steps,
      ScheduledExecutorService timer) {
    this.client = client;
    this.acquisitions = acquisitions;
    this.name = name;
    this.lockOptions = lockOptions;
    this.waitNanos = waitNanos;
    this.steps = steps;
    this.timer = timer;
    this.startedAt = client.clock().nanoTime();
  }

  /** Starts the first step. */
  void start() {
    submit(this::firstStep);
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    if (cancelled) {
      stop();
    }
    return cancelled;
  }

  /** The client closes: ends this acquisition as not acquired. */
  void abortForClose() {
    closing = true;
    stop();
  }

  /** Interrupts the running step, or starts one that finds the acquisition over. */
  private void stop() {
    runnerLock.lock();
    try {
      if (runner != null) {
        runner.interrupt();
        return;
      }
    } finally {
      runnerLock.unlock();
    }
    wake();
  }

  /** A signal, the timer or a stop: starts the next step unless one is queued or running. */
  private void wake() {
    if (state.compareAndSet(WAITING, RUNNING)) {
      Future<?> pending = wakeUp;
      if (pending != null) {
        pending.cancel(false);
      }
      submit(this::nextStep);
    }
  }

  private void submit(Runnable step) {
    try {
      steps.execute(() -> run(step));
    } catch (RejectedExecutionException e) {
      closing = true; // the client's threads are stopping
      run(step);
    }
  }

  private void run(Runnable step) {
    runnerLock.lock();
    try {
      runner = Thread.currentThread();
    } finally {
      runnerLock.unlock();
    }
    try {
      if (isDone() || closing) {
        throw closing ? closed() : acquisitions.interrupted(name);
      }
      step.run();
    } catch (RuntimeException e) {
      finish(null, e);
    } finally {
      runnerLock.lock();
      try {
        runner = null;
        Thread.interrupted(); // a cancellation's interrupt belongs to this step only
      } finally {
        runnerLock.unlock();
      }
    }
  }

  private void firstStep() {
    client.ensureOpen();
    GrantKey key = GrantKey.of(name, lockOptions, holder);
    Lease reentered = acquisitions.reenter(key, lockOptions, startedAt);
    if (reentered != null) {
      deliver(reentered);
      return;
    }
    Acquisitions.Acquisition a = acquisitions.begin(key, lockOptions, waitNanos, startedAt);
    acquisition = a;
    Lease lease = acquisitions.attempt(a, waitNanos == 0);
    if (lease != null || waitNanos == 0) {
      finish(lease, null);
      return;
    }
    acquisitions.startWaiting(a, this::wake);
    acquisitions.awaitWatching(a);
    retryOrWait(a);
  }

  private void nextStep() {
    Acquisitions.Acquisition a = acquisition;
    acquisitions.afterWait(a);
    retryOrWait(a);
  }

  private void retryOrWait(Acquisitions.Acquisition a) {
    Lease lease = acquisitions.retry(a);
    if (lease != null) {
      finish(lease, null);
      return;
    }
    long park = acquisitions.nextWaitNanos(a);
    state.set(WAITING);
    try {
      wakeUp = timer.schedule(this::wake, park, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      closing = true; // the client's threads are stopping
    }
    if (a.signalled() || isDone() || closing) {
      wake(); // signalled during the attempt, or stopped: go on at once
    }
  }

  /** Ends the acquisition with {@code lease} (null: not acquired, for {@code failure}). */
  private void finish(@Nullable Lease lease, @Nullable RuntimeException failure) {
    state.set(DONE);
    Acquisitions.Acquisition a = acquisition;
    RuntimeException outcome = failure;
    if (a != null) {
      try {
        acquisitions.end(a, lease);
      } catch (RuntimeException e) {
        outcome = outcome == null ? e : outcome;
      }
    }
    if (lease != null) {
      if (a != null) {
        acquisitions.acquired(a, lease);
      }
      deliver(lease);
      return;
    }
    if (outcome == null) {
      outcome = acquisitions.timeout(name, waitNanos);
    } else if (closing) {
      outcome = closed();
    }
    client
        .lockEvents()
        .notAcquired(
            name,
            failure == null
                ? LockEventListener.AcquireFailure.TIMEOUT
                : LockEvents.failureOf(outcome),
            startedAt);
    completeExceptionally(outcome);
  }

  /** Hands the lease to the future, or releases it if the caller has gone (cancelled, closed). */
  private void deliver(Lease lease) {
    state.set(DONE);
    if (closing || !complete(lease)) {
      lease.release();
      if (closing) {
        completeExceptionally(closed());
      }
    }
  }

  private static IllegalStateException closed() {
    return new IllegalStateException("The lock client is closed");
  }
}
