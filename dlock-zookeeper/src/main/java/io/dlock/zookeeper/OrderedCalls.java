package io.dlock.zookeeper;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs the calls of one owner on one lock one after another, in call order, and the blocking ones
 * on the backend's worker threads. So an abandon or release issued after an acquisition (which the
 * core may have given up waiting for) always sees that acquisition's queue node: none is orphaned.
 */
final class OrderedCalls {
  /** The last pending call per key: calls of one owner on one lock run one after another. */
  private final ConcurrentHashMap<LockAndOwner, CompletableFuture<Void>> tails =
      new ConcurrentHashMap<>();

  private final Executor workers;
  private final ConnectionGate gate;
  private final BooleanSupplier closed;
  private final ZooKeeperFailures failures;

  /**
   * @param workers the backend's worker threads, shut down by the backend
   * @param closed whether the backend is closed: no call starts then
   */
  OrderedCalls(
      Executor workers, ConnectionGate gate, BooleanSupplier closed, ZooKeeperFailures failures) {
    this.workers = workers;
    this.gate = gate;
    this.closed = closed;
    this.failures = failures;
  }

  @FunctionalInterface
  interface Call<T> {
    T call() throws Exception;
  }

  @FunctionalInterface
  interface AsyncCall<T> {
    CompletableFuture<T> start();
  }

  /** Whether a call for {@code key} is running or waiting for its turn. */
  boolean hasPending(LockAndOwner key) {
    return tails.containsKey(key);
  }

  /**
   * Runs the blocking {@code call} on a worker thread, after every earlier call for the same key
   * has finished, in the order of the calls.
   */
  <T> CompletableFuture<T> submit(LockAndOwner key, String operation, Call<T> call) {
    return submit(key, operation, true, call);
  }

  /**
   * As {@link #submit(LockAndOwner, String, Call)}; with {@code whenConnected}, waits for a
   * connection (see {@link ConnectionGate}) before it starts.
   */
  <T> CompletableFuture<T> submit(
      LockAndOwner key, String operation, boolean whenConnected, Call<T> call) {
    return submitAsync(key, operation, whenConnected, () -> onWorker(operation, call));
  }

  /**
   * Starts {@code call} once every earlier call for the same key has finished (at once, on the
   * calling thread, if none is pending), and counts it finished when its future completes. {@code
   * call} must not block: it sends requests in the background or hands blocking work to {@link
   * #onWorker}.
   *
   * @param whenConnected wait, in turn, for a connection before starting, bounded by the connection
   *     timeout: a connecting client is not an unreachable one, and the core bounds the caller's
   *     wait. The call keeps its place in the key's order meanwhile, so a later abandon or release
   *     of the same owner still runs after it.
   */
  <T> CompletableFuture<T> submitAsync(
      LockAndOwner key, String operation, boolean whenConnected, AsyncCall<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    if (closed.getAsBoolean()) {
      result.completeExceptionally(new IllegalStateException("The ZooKeeper backend is closed"));
      return result;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    // The key's turn ends before the caller hears the answer: a call the caller makes on it (the
    // abandon of a refused attempt) then finds nothing pending and starts on the caller's thread.
    java.util.function.Consumer<@Nullable Throwable> finish =
        failure -> {
          tails.remove(key, done);
          done.complete(null);
          if (failure != null) {
            result.completeExceptionally(failures.failure(operation, failure));
          }
        };
    Runnable run =
        () -> {
          CompletableFuture<T> running;
          try {
            running = call.start();
          } catch (RuntimeException e) {
            running = CompletableFuture.failedFuture(e);
          }
          running.whenComplete(
              (value, failure) -> {
                finish.accept(failure);
                if (failure == null) {
                  result.complete(value);
                }
              });
        };
    Runnable start =
        whenConnected
            ? () ->
                gate.whenOpen()
                    .whenComplete(
                        (open, failure) -> {
                          if (failure == null) {
                            run.run();
                          } else {
                            finish.accept(failure);
                          }
                        })
            : run;
    @SuppressWarnings("unchecked")
    CompletableFuture<Void>[] previous = new CompletableFuture[1];
    tails.compute(
        key,
        (k, tail) -> {
          previous[0] = tail;
          return done;
        });
    if (previous[0] == null) {
      start.run();
    } else {
      previous[0].whenComplete((v, e) -> start.run());
    }
    return result;
  }

  /** Runs the blocking {@code call} on a worker thread. */
  <T> CompletableFuture<T> onWorker(String operation, Call<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      workers.execute(
          () -> {
            try {
              result.complete(call.call());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              result.completeExceptionally(failures.unavailable(operation, e));
            } catch (Exception e) {
              result.completeExceptionally(failures.unavailable(operation, e));
            }
          });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new IllegalStateException("The ZooKeeper backend is closed", e));
    }
    return result;
  }
}
