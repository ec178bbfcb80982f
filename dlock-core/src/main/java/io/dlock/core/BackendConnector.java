package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClient;
import io.dlock.LockInterruptedException;
import io.dlock.MonotonicClock;
import io.dlock.spi.DriverThreads;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connects a {@link LockClient} while its server may be down: one attempt at a time, on a thread of
 * its own (a connect may hang on a silent server for the driver's own timeouts, which callers must
 * not wait for), retried in the background with a backoff from 1 to 30 seconds until it succeeds,
 * and started at once by a caller that finds no attempt running (at most one a second), so that a
 * server that comes back is used at the next call.
 *
 * <p>A caller waits for the attempt within its own bound and gets {@link
 * BackendUnavailableException} when there is no client by then; it never waits for the driver.
 */
final class BackendConnector implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BackendConnector.class);
  static final long MIN_GAP_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final String target;
  private final Supplier<LockClient> connect;
  private final MonotonicClock clock;
  private final ExecutorService attempts = DriverThreads.onDemand("dlock-connect");
  private final ScheduledExecutorService timer = DriverThreads.timer("dlock-connect-timer");
  // Futures whose bound ran out complete here, never on the timer: what callers chain to them may
  // block, and the timer runs every other call's bound and the background's retries.
  private final ExecutorService callbacks = DriverThreads.onDemand("dlock-connect-callback");
  // Guards the fields below; never held across a connect or a wait.
  private final ReentrantLock state = new ReentrantLock();
  private volatile @Nullable LockClient connected;
  private @Nullable CompletableFuture<LockClient> inFlight;
  private @Nullable Throwable lastFailure;
  private long lastFailureNanos;
  private boolean everFailed;
  private long backoffNanos = MIN_GAP_NANOS;
  private @Nullable ScheduledFuture<?> retry;
  private boolean closed;

  /**
   * @param target the server, as messages name it ({@code redis://cache:6379})
   * @param connect makes a connected client, or throws (any exception: the server is not there)
   */
  BackendConnector(String target, Supplier<LockClient> connect, MonotonicClock clock) {
    this.target = target;
    this.connect = connect;
    this.clock = clock;
  }

  /** The connected client, or null while there is none. */
  @Nullable LockClient connected() {
    return connected;
  }

  /**
   * Starts the first attempt and waits for it at most {@code boundNanos}.
   *
   * @return the client if it connected within the bound, else null (attempts go on)
   * @throws RuntimeException what the first attempt threw if it is not the server being away
   *     ({@link BackendUnavailableException}): a misconfiguration that no retry will mend
   */
  @Nullable LockClient firstAttempt(long boundNanos) {
    CompletableFuture<LockClient> first = attempt(false);
    try {
      return first.get(boundNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      Throwable original = cause.getCause() == null ? cause : cause.getCause();
      if (original instanceof BackendUnavailableException) {
        return null;
      }
      close();
      if (original instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (original instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(original);
    }
  }

  /**
   * The client, waiting for a connection at most {@code boundNanos}.
   *
   * @param interruptible whether an interrupt ends the wait; if not, the wait goes on to its bound
   *     and the interrupt flag is set again afterwards (one attempt, as the core's, ignores
   *     interrupts)
   * @throws BackendUnavailableException if there is none within the bound
   * @throws LockInterruptedException if the thread is interrupted while it waits (interruptible
   *     only); the flag stays set
   */
  LockClient await(long boundNanos, boolean interruptible) {
    LockClient client = connected;
    if (client != null) {
      return client;
    }
    CompletableFuture<LockClient> attempt = attempt(false);
    long deadline = System.nanoTime() + Math.max(0, boundNanos);
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return attempt.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          throw notConnected(
              "no connection within the call's bound of "
                  + TimeUnit.NANOSECONDS.toMillis(boundNanos)
                  + " ms",
              null);
        } catch (InterruptedException e) {
          if (interruptible) {
            Thread.currentThread().interrupt();
            throw new LockInterruptedException(
                "Interrupted while waiting to connect to " + target, e);
          }
          interrupted = true;
        } catch (ExecutionException e) {
          throw asUnavailable(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The client as a future that fails with {@link BackendUnavailableException} when there is none
   * within {@code boundNanos}.
   */
  CompletableFuture<LockClient> whenConnected(long boundNanos) {
    LockClient client = connected;
    if (client != null) {
      return CompletableFuture.completedFuture(client);
    }
    CompletableFuture<LockClient> attempt = attempt(false);
    CompletableFuture<LockClient> bounded = new CompletableFuture<>();
    attempt.whenComplete(
        (c, failure) -> {
          if (failure != null) {
            bounded.completeExceptionally(asUnavailable(failure));
          } else {
            bounded.complete(c);
          }
        });
    if (!bounded.isDone()) {
      try {
        ScheduledFuture<?> timeout =
            timer.schedule(
                () ->
                    completeOffTimer(
                        bounded,
                        notConnected(
                            "no connection within the call's bound of "
                                + TimeUnit.NANOSECONDS.toMillis(boundNanos)
                                + " ms",
                            null)),
                Math.max(0, boundNanos),
                TimeUnit.NANOSECONDS);
        bounded.whenComplete((c, f) -> timeout.cancel(false));
      } catch (RejectedExecutionException e) {
        bounded.completeExceptionally(closedError());
      }
    }
    return bounded;
  }

  /** Fails {@code bounded} on a callback thread (on this one once the threads are stopped). */
  private void completeOffTimer(CompletableFuture<LockClient> bounded, RuntimeException failure) {
    try {
      callbacks.execute(() -> bounded.completeExceptionally(failure));
    } catch (RejectedExecutionException e) {
      bounded.completeExceptionally(failure);
    }
  }

  /**
   * The attempt running, or a new one; for a caller, a failed future when the last one failed less
   * than a second ago (callers of a server that is down do not each start one).
   *
   * @param background the background's retry, which its backoff already spaces (in real time,
   *     whatever the options' clock says)
   */
  private CompletableFuture<LockClient> attempt(boolean background) {
    CompletableFuture<LockClient> attempt;
    state.lock();
    try {
      LockClient client = connected;
      if (client != null) {
        return CompletableFuture.completedFuture(client);
      }
      if (closed) {
        return CompletableFuture.failedFuture(closedError());
      }
      if (inFlight != null) {
        return inFlight;
      }
      if (!background
          && lastFailure != null
          && clock.nanoTime() - lastFailureNanos < MIN_GAP_NANOS) {
        return CompletableFuture.failedFuture(notConnected("the last attempt failed", lastFailure));
      }
      if (retry != null) {
        retry.cancel(false);
        retry = null;
      }
      attempt = new CompletableFuture<>();
      inFlight = attempt;
    } finally {
      state.unlock();
    }
    try {
      attempts.execute(() -> run(attempt));
    } catch (RejectedExecutionException e) {
      attempt.completeExceptionally(closedError()); // closed meanwhile
    }
    return attempt;
  }

  private void run(CompletableFuture<LockClient> attempt) {
    LockClient client;
    try {
      client = connect.get();
      if (client == null) {
        throw new NullPointerException("The connect of " + target + " returned no client");
      }
    } catch (Throwable e) {
      failed(attempt, e);
      return;
    }
    boolean keep;
    boolean afterFailures;
    state.lock();
    try {
      keep = !closed;
      afterFailures = everFailed;
      if (keep) {
        connected = client;
        inFlight = null;
        lastFailure = null;
      }
    } finally {
      state.unlock();
    }
    if (!keep) {
      client.close(); // close() ran while it connected: nobody will use it
      attempt.completeExceptionally(closedError());
      return;
    }
    if (afterFailures) {
      log.info("Connected to {}: locks are available", target);
    }
    attempt.complete(client);
    stopThreads(); // not needed from now on: every call finds the client
  }

  private void failed(CompletableFuture<LockClient> attempt, Throwable e) {
    long delay;
    boolean first;
    state.lock();
    try {
      first = !everFailed;
      everFailed = true;
      lastFailure = e;
      lastFailureNanos = clock.nanoTime();
      inFlight = null;
      delay = backoffNanos;
      backoffNanos = Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
      if (!closed) {
        try {
          retry = timer.schedule(() -> attempt(true), delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException ignored) {
          // closed meanwhile
        }
      }
    } finally {
      state.unlock();
    }
    if (!(e instanceof BackendUnavailableException)) {
      // Not a server that is away: a misconfiguration (the start fails with it if it came within
      // the first bound; later, say so as what it is, every time).
      log.error(
          "Connecting to {} failed, not for want of a server: {}; check the configuration."
              + " Retrying in {} s",
          target,
          e.toString(),
          TimeUnit.NANOSECONDS.toSeconds(delay));
    } else if (first) {
      log.warn(
          "No connection to {} ({}): lock calls fail with BackendUnavailableException until it"
              + " answers; retrying in the background",
          target,
          e.toString());
    } else {
      log.info(
          "Still no connection to {} ({}); next attempt in {} s",
          target,
          e.toString(),
          TimeUnit.NANOSECONDS.toSeconds(delay));
    }
    attempt.completeExceptionally(notConnected("the attempt failed", e));
  }

  /**
   * What a caller gets for a failed attempt: the attempt's {@link BackendUnavailableException}, or
   * the closed client's {@link IllegalStateException}.
   */
  private RuntimeException asUnavailable(Throwable failure) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof BackendUnavailableException || cause instanceof IllegalStateException) {
      return (RuntimeException) cause;
    }
    return notConnected("the attempt failed", cause);
  }

  private BackendUnavailableException notConnected(String why, @Nullable Throwable cause) {
    return new BackendUnavailableException(
        "Not connected to "
            + target
            + " yet: "
            + why
            + (cause == null ? "" : " (" + cause.getMessage() + ")")
            + "; the client keeps trying in the background",
        cause);
  }

  private static IllegalStateException closedError() {
    return new IllegalStateException("The lock client is closed");
  }

  private void stopThreads() {
    timer.shutdownNow();
    attempts.shutdown();
    callbacks.shutdown();
  }

  /** Stops the attempts; a client an attempt still makes is closed when it comes. */
  @Override
  public void close() {
    LockClient client;
    CompletableFuture<LockClient> running;
    state.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      client = connected;
      running = inFlight;
      if (retry != null) {
        retry.cancel(false);
      }
    } finally {
      state.unlock();
    }
    stopThreads();
    if (running != null) {
      running.completeExceptionally(closedError()); // its callers end now; run() closes its client
    }
    if (client != null) {
      client.close();
    }
  }
}
