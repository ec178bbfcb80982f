package io.dlock.torture;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The {@code client-close} fault inside a worker: asked by the coordinator ({@link CloseRequests}),
 * the worker closes its own client while its main thread holds a lock and two more threads of the
 * same client wait for it, one in a blocking {@code acquire}, one in {@code acquireAsync}. Then it
 * connects a new client and goes on.
 *
 * <p>The waiters write to the worker's history under sources of their own ({@code w1.b}, {@code
 * w1.a}), so that their waits are told apart from the main thread's. {@link ClientCloseCriterion}
 * judges what follows: the waiters end within the operation timeout, nothing is granted to the
 * closed client, and another client is granted the lock within the next-grant bound.
 *
 * <p>The negative control ({@code abandonFor} positive) lets go of the main thread's lease without
 * releasing it, after stretching it to that long, before it closes: the lock is then held by nobody
 * past the next-grant bound.
 */
final class ClientCloser {
  private final String worker;
  private final Path historyFile;
  private final EventLog history;
  private final RegisterClient registers;
  private final Supplier<LockClient> connect;
  private final LockOptions waiterOptions;
  private final Duration wait;
  private final Duration abandonFor;
  private final Duration settle;

  ClientCloser(
      String worker,
      Path historyFile,
      EventLog history,
      RegisterClient registers,
      Supplier<LockClient> connect,
      LockOptions waiterOptions,
      Duration wait,
      Duration abandonFor,
      Duration settle) {
    this.worker = worker;
    this.historyFile = historyFile;
    this.history = history;
    this.registers = registers;
    this.connect = connect;
    this.waiterOptions = waiterOptions;
    this.wait = wait;
    this.abandonFor = abandonFor;
    this.settle = settle;
  }

  /**
   * Closes {@code client} while the calling thread holds {@code held} of {@code lock} and two more
   * threads of the same client wait for that lock; returns the new client.
   */
  LockClient closeWhileHolding(LockClient client, String lock, Lease held) {
    // The close goes through to its end even if the run ends meanwhile (its interrupt is kept for
    // after): a hold half closed would be a hold never released.
    boolean interrupted = false;
    long token = held.fencingToken();
    EventLog blockingLog = new EventLog(historyFile, worker + ".b");
    EventLog asyncLog = new EventLog(historyFile, worker + ".a");
    Thread blocking =
        new Thread(() -> blockingWaiter(client, lock, blockingLog), worker + "-close-waiter");
    blocking.setDaemon(true);
    blocking.start();
    asyncLog.append(Event.Kind.ACQUIRING, lock, 0, "close waiter, async");
    CompletableFuture<Void> async =
        client
            .lock(lock, waiterOptions)
            .acquireAsync(wait)
            .handle(
                (lease, failure) -> {
                  recordEnd(asyncLog, lock, lease, failure);
                  return null;
                });
    // Fault timing, not synchronization: both waiters get to wait on the backend before the close.
    try {
      TimeUnit.NANOSECONDS.sleep(settle.toNanos());
    } catch (InterruptedException e) {
      interrupted = true;
    }
    registers.closing(lock); // the coordinator learns which lock, and sends the probe for it
    boolean abandoned = !abandonFor.isZero();
    if (abandoned) {
      held.extend(abandonFor); // the negative control: a long lease, then let go of unreleased
      history.append(Event.Kind.RELEASING, lock, token, "abandoned for " + abandonFor.toMillis());
      held.abandon();
      history.append(Event.Kind.RELEASED, lock, token, "abandoned");
    } else {
      // The hold ends as its holder gives it up: close() releases it.
      history.append(Event.Kind.RELEASING, lock, token, "by closing the client");
    }
    history.append(Event.Kind.CLOSE_BEGIN, lock, token, "holding, 2 waiters");
    client.close();
    history.append(Event.Kind.CLOSE_END, lock, token, "");
    if (!abandoned) {
      String result;
      try {
        result = Boolean.toString(held.release()); // already released by the close: false
      } catch (RuntimeException e) {
        result = "error " + e;
      }
      history.append(Event.Kind.RELEASED, lock, token, result);
    }
    // Bounded: a waiter that never ends is the criterion's to report, not a reason to stop here.
    long bound = wait.plusSeconds(1).toMillis();
    try {
      blocking.join(bound);
      async.get(bound, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      interrupted = true;
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      // recorded by its handler, or not at all (a hang): the history says which
    }
    if (!blocking.isAlive() && async.isDone()) {
      blockingLog.close();
      asyncLog.close();
    }
    LockClient fresh = connect.get();
    history.append(Event.Kind.CLIENT_NEW, "-", 0, "");
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return fresh;
  }

  private void blockingWaiter(LockClient client, String lock, EventLog log) {
    log.append(Event.Kind.ACQUIRING, lock, 0, "close waiter, blocking");
    Lease lease = null;
    RuntimeException failure = null;
    try {
      lease = client.lock(lock, waiterOptions).acquire(wait);
    } catch (RuntimeException e) {
      failure = e;
    }
    recordEnd(log, lock, lease, failure);
  }

  /** A waiter's end: refused (as it should be, by the close), or granted and given back. */
  private static void recordEnd(EventLog log, String lock, Lease lease, Throwable failure) {
    if (lease == null) {
      log.append(Event.Kind.NO_GRANT, lock, 0, "close waiter " + failure);
      return;
    }
    long token = lease.fencingToken();
    log.append(Event.Kind.GRANT, lock, token, "close waiter");
    log.append(Event.Kind.RELEASING, lock, token, "");
    String result;
    try {
      result = Boolean.toString(lease.release());
    } catch (RuntimeException e) {
      result = "error " + e;
    }
    log.append(Event.Kind.RELEASED, lock, token, result);
  }
}
