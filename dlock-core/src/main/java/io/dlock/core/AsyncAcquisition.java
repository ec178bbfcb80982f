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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An asynchronous acquisition, run in steps over the same methods of {@link Acquisitions} as a
 * blocking one: a step makes one attempt (or the first one, or joins the waiters) on one of the
 * client's acquisition threads; between steps it holds no thread at all, only a place among the
 * lock's waiters and a timer task. A release signal, the timer or a stop (cancellation, close)
 * starts the next step. So ten thousand waiting acquisitions cost ten thousand small objects, not
 * threads.
 *
 * <p>Cancelling the future (or closing the client) ends the wait: a step in progress is interrupted
 * as a blocking caller would be, and what it was answered is released. The future is completed on
 * the client's callback threads, never on an acquisition thread, so that what the caller chains to
 * it (which may block) cannot hold up other acquisitions.
 */
final class AsyncAcquisition extends CompletableFuture<Lease> {
  private static final Logger log = LoggerFactory.getLogger(AsyncAcquisition.class);

  private static final int RUNNING = 0; // a step is queued or running
  private static final int WAITING = 1; // no step: waiting for a signal, the timer or a stop
  private static final int DONE = 2;

  private final Acquisitions acquisitions;
  private final CoreLockClient client;
  private final String name;
  private final LockOptions lockOptions;
  private final long waitNanos;
  private final Executor steps;
  private final Executor callbacks;
  private final ScheduledExecutorService timer;
  private final long startedAt;

  private final AtomicInteger state = new AtomicInteger(RUNNING);

  /** Counts the waits: a timer task wakes only the wait it was set for. */
  private final AtomicLong waits = new AtomicLong();

  private @Nullable Acquisition acquisition; // set by the first step
  private volatile @Nullable Future<?> wakeUp;
  private volatile boolean closing;

  /** Guards {@link #runner}: a stop interrupts only the thread of a step still running. */
  private final ReentrantLock runnerLock = new ReentrantLock();

  private @Nullable Thread runner;

  AsyncAcquisition(
      CoreLockClient client,
      Acquisitions acquisitions,
      String name,
      LockOptions lockOptions,
      long waitNanos,
      Executor steps,
      Executor callbacks,
      ScheduledExecutorService timer) {
    this.client = client;
    this.acquisitions = acquisitions;
    this.name = name;
    this.lockOptions = lockOptions;
    this.waitNanos = waitNanos;
    this.steps = steps;
    this.callbacks = callbacks;
    this.timer = timer;
    this.startedAt = client.clock().nanoTime(); // the wait counts from the call
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
    // The future ends here, on the closing thread, before close() returns: a completion queued
    // earlier on the callback threads then finds it done, and hands out nothing (found by review).
    completeExceptionally(closed());
    stop();
  }

  /**
   * Interrupts the running step, if any, and starts a step if none is queued or running: whichever
   * runs next finds the acquisition over. Both, always: a step may be between its last check and
   * its end.
   */
  private void stop() {
    runnerLock.lock();
    try {
      if (runner != null) {
        runner.interrupt();
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
      steps.execute(() -> run(step, true));
    } catch (RejectedExecutionException e) {
      closing = true; // the client's threads are stopping
      run(step, false);
    }
  }

  /**
   * Runs one step.
   *
   * @param onStepThread false when run on a caller's thread (the client is closing): its interrupt
   *     flag is then the caller's own and is left alone
   */
  private void run(Runnable step, boolean onStepThread) {
    Thread current = Thread.currentThread();
    if (onStepThread) {
      runnerLock.lock();
      try {
        runner = current;
      } finally {
        runnerLock.unlock();
      }
    }
    try {
      if (isDone() || closing) {
        throw closing ? closed() : acquisitions.interrupted(name);
      }
      step.run();
    } catch (RuntimeException e) {
      finish(null, e);
    } catch (Error e) {
      finish(null, new IllegalStateException("An acquisition step of '" + name + "' failed", e));
      if (e instanceof VirtualMachineError) {
        throw e;
      }
    } finally {
      if (onStepThread) {
        runnerLock.lock();
        try {
          if (runner == current) {
            runner = null;
          }
          Thread.interrupted(); // a stop's interrupt belongs to this step only
        } finally {
          runnerLock.unlock();
        }
      }
    }
  }

  private void firstStep() {
    client.ensureOpen();
    GrantKey key = GrantKey.of(name, lockOptions, null); // a key of its own: no re-entry
    Lease reentered = acquisitions.reenter(key, lockOptions, startedAt);
    if (reentered != null) {
      state.set(DONE);
      deliver(reentered);
      return;
    }
    Acquisition a = acquisitions.begin(key, lockOptions, waitNanos, startedAt);
    acquisition = a;
    // One attempt at least, as a blocking caller makes, even if the wait passed while this step
    // waited for a thread; a single one then.
    boolean single = waitNanos == 0 || a.deadline.passed();
    Lease lease = acquisitions.attempt(a, single);
    if (lease != null || single) {
      finish(lease, null);
      return;
    }
    acquisitions.startWaiting(a, this::wake);
    acquisitions.awaitWatching(a);
    retryOrWait(a);
  }

  private void nextStep() {
    Acquisition a = acquisition;
    acquisitions.afterWait(a);
    retryOrWait(a);
  }

  private void retryOrWait(Acquisition a) {
    Lease lease = acquisitions.retry(a);
    if (lease != null) {
      finish(lease, null);
      return;
    }
    long park = acquisitions.nextWaitNanos(a);
    long wait = waits.incrementAndGet();
    state.set(WAITING);
    try {
      Future<?> task =
          timer.schedule(
              () -> {
                if (waits.get() == wait) {
                  wake();
                }
              },
              park,
              TimeUnit.NANOSECONDS);
      wakeUp = task;
      if (state.get() != WAITING || waits.get() != wait) {
        task.cancel(false); // woken meanwhile: this wait is over
      }
    } catch (RejectedExecutionException e) {
      closing = true; // the client's threads are stopping
    }
    if (a.signalled() || isDone() || closing) {
      wake(); // signalled during the attempt, or stopped: go on at once
    }
  }

  /** Ends the acquisition, once, with {@code lease} (null: not acquired, for {@code failure}). */
  private void finish(@Nullable Lease lease, @Nullable RuntimeException failure) {
    if (state.getAndSet(DONE) == DONE) {
      if (lease != null) {
        releaseQuietly(lease); // cannot happen: a step runs only while the acquisition is open
      }
      return;
    }
    Future<?> pending = wakeUp;
    if (pending != null) {
      pending.cancel(false);
    }
    Acquisition a = acquisition;
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
    RuntimeException failed = outcome;
    onCallbackThread(() -> completeExceptionally(failed));
  }

  /**
   * Hands the lease to the future, or releases it if the caller has gone (cancelled) or the client
   * closes. When closing, the release runs here, so that the client's close (which waits for the
   * steps) sees it done before the backend closes.
   */
  private void deliver(Lease lease) {
    if (closing || isDone()) {
      releaseQuietly(lease);
      onCallbackThread(() -> completeExceptionally(closing ? closed() : cancelledLate()));
      return;
    }
    onCallbackThread(
        () -> {
          // Cancelled meanwhile: give the lease back. Ended by close(): close() releases it (its
          // grant is among the client's), before the backend closes; a release from here could
          // still be in flight then.
          if (!complete(lease) && !closing) {
            releaseQuietly(lease);
          }
        });
  }

  private void onCallbackThread(Runnable completion) {
    try {
      callbacks.execute(completion);
    } catch (RejectedExecutionException | OutOfMemoryError e) {
      // Closing, or no thread to be had ("unable to create native thread"): complete here rather
      // than never, which would leave the future pending and its grant held and renewed.
      completion.run();
    }
  }

  private void releaseQuietly(Lease lease) {
    try {
      lease.release();
    } catch (RuntimeException e) {
      log.warn(
          "Could not release lock '{}' acquired for a caller that had gone: {}",
          name,
          e.getMessage());
    }
  }

  private IllegalStateException cancelledLate() {
    return new IllegalStateException("The acquisition of '" + name + "' was cancelled");
  }

  private static IllegalStateException closed() {
    return new IllegalStateException("The lock client is closed");
  }
}
