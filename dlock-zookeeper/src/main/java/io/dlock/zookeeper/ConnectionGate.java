package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * When the backend may send a call: at once while connected, otherwise once the connection is back,
 * for at most a bound. A client that is connecting (just started, or reconnecting after a
 * suspension or a session change) is not an unreachable one, so a call waits for it rather than
 * failing at once; the core bounds every call by the caller's wait and the operation timeout, and
 * this bound (the connection timeout) ends a call the core gave up on.
 *
 * <p>The gate is opened by the backend's connection-state handling ({@link ZooKeeperSession}),
 * after that handling has applied what the connection change means (a new session: the old
 * session's nodes forgotten and its leases reported lost), never merely because the ZooKeeper
 * client says it is connected: a call that waited here must never run against the bookkeeping of a
 * session that already ended. So a release of a lease lost with its session finds nothing held and
 * reports the loss.
 *
 * <p>Waiting never blocks a thread: a waiting call is a future completed by {@link #open()} or by
 * its timeout on the backend's timer.
 */
final class ConnectionGate {
  private static final CompletableFuture<Void> OPEN = CompletableFuture.completedFuture(null);

  private final BooleanSupplier connected;
  private final ScheduledExecutorService timer;
  private final Duration bound;
  private final String description;
  private final ConcurrentLinkedQueue<CompletableFuture<Void>> waiting =
      new ConcurrentLinkedQueue<>();
  private volatile boolean open;
  private volatile boolean shut;

  /**
   * @param connected whether the ZooKeeper client has a connection now
   * @param bound the longest a call waits for a connection
   * @param description the ensemble and root, for messages
   */
  ConnectionGate(
      BooleanSupplier connected,
      ScheduledExecutorService timer,
      Duration bound,
      String description) {
    this.connected = connected;
    this.timer = timer;
    this.bound = bound;
    this.description = description;
  }

  /**
   * Completes when a call may be sent: at once (on the calling thread) if the gate is open and the
   * client connected; otherwise when the gate opens, or exceptionally with {@link
   * BackendUnavailableException} once the bound has passed without a connection.
   */
  CompletableFuture<Void> whenOpen() {
    if (passable()) {
      return OPEN;
    }
    if (shut) {
      return CompletableFuture.failedFuture(closed());
    }
    CompletableFuture<Void> call = new CompletableFuture<>();
    waiting.add(call);
    // Opened between the check above and joining the queue: open() may have drained it already.
    if (passable()) {
      waiting.remove(call);
      call.complete(null);
      return call;
    }
    try {
      ScheduledFuture<?> timeout =
          timer.schedule(() -> expire(call), bound.toNanos(), TimeUnit.NANOSECONDS);
      call.whenComplete((v, e) -> timeout.cancel(false));
    } catch (RejectedExecutionException e) {
      waiting.remove(call);
      call.completeExceptionally(closed());
    }
    return call;
  }

  /** The connection is up and its meaning applied: lets every waiting call go, in arrival order. */
  void open() {
    open = true;
    CompletableFuture<Void> call;
    while ((call = waiting.poll()) != null) {
      call.complete(null);
    }
  }

  /** The connection is suspended or its session lost: calls wait from now on. */
  void close() {
    open = false;
  }

  /** The backend is closing: waiting calls fail now, later ones at once. */
  void shutdown() {
    shut = true;
    open = false;
    CompletableFuture<Void> call;
    while ((call = waiting.poll()) != null) {
      call.completeExceptionally(closed());
    }
  }

  private boolean passable() {
    return open && !shut && connected.getAsBoolean();
  }

  private void expire(CompletableFuture<Void> call) {
    waiting.remove(call);
    if (passable()) {
      call.complete(null); // a connection event this gate missed: the client is connected
    } else {
      call.completeExceptionally(
          new BackendUnavailableException(
              "No connection to ZooKeeper at " + description + " within " + bound));
    }
  }

  private static IllegalStateException closed() {
    return new IllegalStateException("The ZooKeeper backend is closed");
  }
}
