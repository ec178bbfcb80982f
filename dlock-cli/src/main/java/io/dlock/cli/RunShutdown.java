package io.dlock.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * What {@code dlock run} does when dlock itself is stopped (SIGTERM, Ctrl-C), from its first step
 * to its release: a JVM shutdown hook that stops the command, or ends the acquisition, and then
 * holds the JVM until the calling thread has given the lock back (bounded), since the JVM halts as
 * soon as its hooks return.
 *
 * <p>The calling thread keeps every server operation: the hook never releases beside it (that raced
 * the client's close and could leave the lock held for its lease). The hook is registered before
 * the client connects and removed only after the release, so no stop falls between: a stop while
 * connecting or acquiring interrupts the calling thread, which then holds nothing, and a command is
 * started only while no stop has begun, under the lock the hook takes to find it.
 */
final class RunShutdown implements AutoCloseable {
  /**
   * How long a stopped dlock waits, once its command ended (after the grace of {@code
   * --kill-after}) or its acquisition was interrupted, for the release and the client's close.
   */
  static final Duration RELEASE_BOUND = Duration.ofSeconds(10);

  private final String lockName;
  private final Duration killAfter;
  private final PrintWriter err;
  private final Thread caller = Thread.currentThread();
  private final CountDownLatch released = new CountDownLatch(1);
  private final ReentrantLock lock = new ReentrantLock();
  private final Thread hook = new Thread(this::onShutdown, "dlock-shutdown");
  private boolean stopping; // guarded by lock
  private boolean acquired; // guarded by lock: past the acquisition, the caller is not interrupted
  private @Nullable Process child; // guarded by lock

  private RunShutdown(String lockName, Duration killAfter, PrintWriter err) {
    this.lockName = lockName;
    this.killAfter = killAfter;
    this.err = err;
  }

  /** Registers the hook; called on the thread that runs the command. */
  static RunShutdown install(String lockName, Duration killAfter, PrintWriter err) {
    RunShutdown shutdown = new RunShutdown(lockName, killAfter, err);
    Runtime.getRuntime().addShutdownHook(shutdown.hook);
    return shutdown;
  }

  /**
   * Starts the command once the lock is held, unless dlock is being stopped (then null: nothing was
   * started, and the caller releases).
   */
  @Nullable Process start(ProcessBuilder builder) throws IOException {
    lock.lock();
    try {
      acquired = true;
      if (stopping) {
        return null;
      }
      child = builder.start();
      return child;
    } finally {
      lock.unlock();
    }
  }

  /** The lock is given back (or was never held): a stopping JVM may end. */
  void released() {
    released.countDown();
  }

  /** At the very end of the run, after the client's close. */
  @Override
  public void close() {
    released();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // The hook runs, and returns now that the release is done.
    }
  }

  private void onShutdown() {
    Process running;
    boolean acquiring;
    lock.lock();
    try {
      stopping = true;
      running = child;
      acquiring = !acquired;
    } finally {
      lock.unlock();
    }
    if (acquiring) {
      caller.interrupt(); // connecting or acquiring: it ends holding nothing
    } else if (running != null && running.isAlive()) {
      RunCommand.stop(running, killAfter); // the calling thread sees it end and releases
    }
    try {
      if (!released.await(RELEASE_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
        err.println(
            "dlock: warning: the lock '"
                + lockName
                + "' was not released within "
                + Durations.format(RELEASE_BOUND)
                + " of the command's end (the backend did not answer); it is free when its lease"
                + " runs out");
        err.flush();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
