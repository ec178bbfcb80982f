package io.dlock.spring;

import io.dlock.Lease;
import io.dlock.LeaseState;
import io.dlock.LockException;
import io.dlock.spi.DriverThreads;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a {@link Locked} method's hold, whatever it returns: the release (now, or once {@link
 * Locked#holdAtLeast()} has passed), and the warning when the lease was lost meanwhile. A release
 * that fails is logged, never thrown at a caller whose work is done: the lock then expires on the
 * server after its lease.
 */
final class LockedReleases {
  private static final Logger log = LoggerFactory.getLogger(LockedReleases.class);

  private LockedReleases() {}

  /**
   * Releases now, or once {@link Locked#holdAtLeast()} has passed since the acquisition (the
   * server's lease shortened to end then; left held across a graceful shutdown: {@link
   * DeferredReleases}).
   */
  static void releaseWhenDue(
      Lease lease, LockedMethod method, long acquiredAt, DeferredReleases releases) {
    long left = method.holdAtLeast().toNanos() - (System.nanoTime() - acquiredAt);
    if (left <= 0) {
      release(lease, method.description());
      return;
    }
    releases.releaseAfter(
        lease, Duration.ofNanos(left), method.options().autoRenew(), method.description());
  }

  /**
   * A stage that completes as {@code result} does, once the lease is released (or its delayed
   * release scheduled): a caller that chains its next call of the method finds the lock free. The
   * release, which blocks on the backend, runs on a thread of its own, never on the thread that
   * completed {@code result} (an event loop, say).
   *
   * <p>Only {@code result}'s completion ends the hold. A caller that cancels the stage it got does
   * not: cancelling a {@code CompletableFuture} stops none of the work behind it, which would then
   * run on without the lock.
   */
  static CompletableFuture<Object> afterCompletion(
      CompletionStage<?> result,
      Lease lease,
      LockedMethod method,
      long acquiredAt,
      DeferredReleases releases) {
    CompletableFuture<Object> released = new CompletableFuture<>();
    result.whenComplete(
        (value, error) -> {
          Runnable release =
              () -> {
                try {
                  releaseWhenDue(lease, method, acquiredAt, releases);
                  warnIfLost(lease, method);
                } finally {
                  if (error != null) {
                    released.completeExceptionally(error);
                  } else {
                    released.complete(value);
                  }
                }
              };
          runOffThread(release);
        });
    return released;
  }

  /**
   * Runs {@code release} on a thread of its own (never the lock client's, nor an event loop), or
   * here if no thread can be had: a release runs late rather than never.
   */
  static void runOffThread(Runnable release) {
    try {
      Threads.RELEASES.execute(release);
    } catch (RejectedExecutionException | OutOfMemoryError | ExceptionInInitializerError e) {
      release.run();
    }
  }

  /** Logs that the lease was lost while the method's work ran, if it was. */
  static void warnIfLost(Lease lease, LockedMethod method) {
    if (wasLost(lease)) {
      log.warn("{}; another holder may have run at the same time", lostMessage(lease, method));
    }
  }

  static boolean wasLost(Lease lease) {
    return !lease.isValid() && lease.state() != LeaseState.RELEASED;
  }

  static String lostMessage(Lease lease, LockedMethod method) {
    return "the lease of lock '"
        + lease.lockName()
        + "' (fencing token "
        + lease.fencingToken()
        + ") was lost while "
        + method.description()
        + " ran";
  }

  static void release(Lease lease, String description) {
    try {
      lease.release();
    } catch (LockException e) {
      log.warn("{}: release of lock '{}' failed: {}", description, lease.lockName(), e.toString());
    }
  }

  /** Made on first use: applications without delayed or asynchronous releases start neither. */
  private static final class Threads {
    /** Releases of asynchronous methods' leases; their number is that of the holds ending. */
    static final ExecutorService RELEASES = DriverThreads.onDemand("dlock-locked-release");
  }
}
