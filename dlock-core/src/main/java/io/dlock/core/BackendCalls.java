package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.LockException;
import io.dlock.spi.Failures;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Bounded waits for backend futures, with one translation of failures for every backend. */
final class BackendCalls {
  private BackendCalls() {}

  /**
   * Waits at most {@code timeoutNanos} for {@code future}, without reacting to interrupts (callers
   * that must react to them use {@link #awaitInterruptibly}); restores the interrupt flag.
   */
  static <T> T await(
      CompletableFuture<T> future, long timeoutNanos, String operation, String backend) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + timeoutNanos;
    try {
      while (true) {
        try {
          return awaitInterruptibly(future, deadline - System.nanoTime(), operation, backend);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  static <T> T awaitInterruptibly(
      CompletableFuture<T> future, long timeoutNanos, String operation, String backend)
      throws InterruptedException {
    try {
      return future.get(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new BackendUnavailableException(
          "No answer from the "
              + backend
              + " backend to '"
              + operation
              + "' within "
              + TimeUnit.NANOSECONDS.toMillis(Math.max(0, timeoutNanos))
              + " ms");
    } catch (ExecutionException | CompletionException | CancellationException e) {
      throw translate(e.getCause() == null ? e : e.getCause(), operation, backend);
    }
  }

  static LockException translate(Throwable failure, String operation, String backend) {
    Throwable cause = Failures.unwrap(failure);
    if (cause instanceof LockException lockException) {
      return lockException;
    }
    if (cause instanceof UnsupportedOperationException unsupported) {
      throw unsupported;
    }
    return new BackendUnavailableException(
        "The " + backend + " backend failed '" + operation + "': " + cause, cause);
  }
}
