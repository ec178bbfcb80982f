package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.HeldLeaseInfo;
import io.dlock.LeaseLostEvent;
import io.dlock.LockEventListener;
import io.dlock.LockEventListener.AcquireFailure;
import io.dlock.LockInterruptedException;
import io.dlock.LockLostException;
import io.dlock.LockTimeoutException;
import io.dlock.MonotonicClock;
import io.dlock.spi.DriverThreads;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's {@link LockEventListener}, called so that a failing listener never breaks a lock:
 * whatever it throws (short of a {@link VirtualMachineError}) is logged and dropped. Durations are
 * measured on the client's clock.
 *
 * <p>Acquisitions and releases are reported on the caller's thread (a tracing listener sees the
 * caller's context); losses and failed renewals on a thread of the listener's own, so that a slow
 * listener never delays the renewal of other leases nor the holders' own loss callbacks.
 */
final class LockEvents implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LockEvents.class);

  private final LockEventListener listener;
  private final MonotonicClock clock;
  private final @Nullable ExecutorService background;

  /** The background's thread (the latest, should one have died): close() never waits for it. */
  private volatile @Nullable Thread backgroundThread;

  LockEvents(LockEventListener listener, MonotonicClock clock, String threadName) {
    this.listener = listener;
    this.clock = clock;
    ThreadFactory threads = DriverThreads.daemon(threadName);
    this.background =
        listener == LockEventListener.NONE
            ? null
            : Executors.newSingleThreadExecutor(
                runnable -> {
                  Thread thread = threads.newThread(runnable);
                  backgroundThread = thread;
                  return thread;
                });
  }

  /**
   * Stops the listener's thread once the events already handed to it are told, waiting a second at
   * most: close() reports the leases it ended as lost, and a caller reading its listener after
   * close() returned must find them there (a CI run found the event still queued). Called from a
   * listener's callback on that thread (a listener that closes the client when a lease is lost), it
   * does not wait for itself: the events queued behind the callback are told once it returns.
   */
  @Override
  public void close() {
    if (background == null) {
      return;
    }
    background.shutdown();
    if (Thread.currentThread() == backgroundThread) {
      return;
    }
    try {
      if (!background.awaitTermination(1, TimeUnit.SECONDS)) {
        log.warn("The lock event listener took over a second; events still queued may be lost");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether anybody listens: lets the hot paths skip measuring for nobody. */
  boolean active() {
    return listener != LockEventListener.NONE;
  }

  Duration since(long startNanos) {
    return Duration.ofNanos(Math.max(0, clock.nanoTime() - startNanos));
  }

  void waiting(String name) {
    String lockName = PermitGrantName.displayName(name);
    if (active()) {
      call("waiting", lockName, () -> listener.waiting(lockName));
    }
  }

  void waitEnded(String name, long waitStartNanos) {
    String lockName = PermitGrantName.displayName(name);
    if (active()) {
      Duration waited = since(waitStartNanos);
      call("waitEnded", lockName, () -> listener.waitEnded(lockName, waited));
    }
  }

  void acquired(String name, long fencingToken, long startNanos, long waitStartNanos) {
    String lockName = PermitGrantName.displayName(name);
    if (!active()) {
      return;
    }
    long now = clock.nanoTime(); // one reading for both: the wait is part of the latency
    Duration latency = Duration.ofNanos(Math.max(0, now - startNanos));
    Duration waited =
        waitStartNanos == 0 ? Duration.ZERO : Duration.ofNanos(Math.max(0, now - waitStartNanos));
    call("acquired", lockName, () -> listener.acquired(lockName, fencingToken, latency, waited));
  }

  void notAcquired(String name, AcquireFailure failure, long startNanos) {
    String lockName = PermitGrantName.displayName(name);
    if (active()) {
      Duration latency = since(startNanos);
      call("notAcquired", lockName, () -> listener.notAcquired(lockName, failure, latency));
    }
  }

  void released(String name, long fencingToken, long openedNanos) {
    String lockName = PermitGrantName.displayName(name);
    if (active()) {
      Duration held = since(openedNanos);
      call("released", lockName, () -> listener.released(lockName, fencingToken, held));
    }
  }

  /** Calls the listener on this thread; whatever it throws is logged, never passed on. */
  private static void call(String method, String lockName, Runnable call) {
    try {
      call.run();
    } catch (RuntimeException | Error e) {
      failed(method, lockName, e);
    }
  }

  void lost(LeaseLostEvent lost) {
    LeaseLostEvent event = named(lost);
    inBackground("lost", event.lockName(), () -> listener.lost(event));
  }

  void renewalFailed(int leases, RuntimeException failure) {
    inBackground(
        "renewalFailed", "(" + leases + " leases)", () -> listener.renewalFailed(leases, failure));
  }

  private void inBackground(String method, String lockName, Runnable call) {
    if (background == null) {
      return;
    }
    try {
      background.execute(() -> call(method, lockName, call));
    } catch (RejectedExecutionException e) {
      log.debug("Lock event '{}' for '{}' not reported: the client is closed", method, lockName);
    }
  }

  /** The failure an exception thrown by an acquisition stands for. */
  static AcquireFailure failureOf(RuntimeException e) {
    if (e instanceof LockTimeoutException) {
      return AcquireFailure.TIMEOUT;
    }
    if (e instanceof BackendUnavailableException) {
      return AcquireFailure.BACKEND_UNAVAILABLE;
    }
    if (e instanceof LockInterruptedException) {
      return AcquireFailure.INTERRUPTED;
    }
    if (e instanceof LockLostException) {
      return AcquireFailure.LEASE_LOST;
    }
    return AcquireFailure.ERROR;
  }

  private static void failed(String method, String lockName, Throwable e) {
    if (e instanceof VirtualMachineError fatal) {
      throw fatal; // out of memory and the like: nothing can be trusted to go on
    }
    log.warn("The lock event listener failed in {} for '{}'; ignored", method, lockName, e);
  }

  /**
   * The event under the name its holder knows: a permit's under its semaphore's name (listeners and
   * metrics see semaphores by name, as locks).
   */
  static LeaseLostEvent named(LeaseLostEvent event) {
    String name = PermitGrantName.displayName(event.lockName());
    return name.equals(event.lockName())
        ? event
        : new LeaseLostEvent(name, event.fencingToken(), event.reason(), event.detail());
  }

  /** The grant's snapshot under the name its holder knows (see {@link #named(LeaseLostEvent)}). */
  static HeldLeaseInfo named(HeldLeaseInfo info) {
    String name = PermitGrantName.displayName(info.lockName());
    return name.equals(info.lockName())
        ? info
        : new HeldLeaseInfo(
            name,
            info.fencingToken(),
            info.holdCount(),
            info.heldSince(),
            info.remaining(),
            info.autoRenew(),
            info.state());
  }
}
