package io.dlock.cli;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Connecting within a bound. A backend's connect waits for the server on its own timeouts
 * (Lettuce's connection set-up, the pool's first connection, a ZooKeeper session and then its
 * close): against a server that accepts and never answers, several seconds past any {@code --wait}.
 * The connection runs on a thread of its own, which the caller stops waiting for at the bound; a
 * client it makes after that is closed at once, and a failure after that is dropped (the caller has
 * reported).
 */
final class BoundedConnect {
  private BoundedConnect() {}

  /**
   * The client {@code connect} makes, waiting at most {@code bound} for it (null: no bound).
   *
   * @param what how the bound is named in the message: {@code --wait 2s}
   * @throws BackendUnavailableException if the connection did not complete within the bound
   * @throws InterruptedException if the calling thread is interrupted while it waits (the client,
   *     if one comes, is closed)
   * @throws RuntimeException whatever {@code connect} threw
   */
  static LockClient connect(
      Supplier<LockClient> connect, @Nullable Duration bound, String target, String what)
      throws InterruptedException {
    CompletableFuture<LockClient> client = new CompletableFuture<>();
    Thread connecting =
        new Thread(
            () -> {
              try {
                client.complete(connect.get());
              } catch (Throwable e) {
                client.completeExceptionally(e);
              }
            },
            "dlock-connect");
    connecting.setDaemon(true); // a JVM that exits does not wait for a server that never answers
    connecting.start();
    try {
      return bound == null
          ? client.get()
          : client.get(Math.max(0, bound.toNanos()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      closeWhenMade(client);
      throw new BackendUnavailableException(
          "no connection to "
              + target
              + " within "
              + what
              + " (the server did not answer in time, or connecting took longer than that)");
    } catch (InterruptedException e) {
      closeWhenMade(client);
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(cause);
    }
  }

  private static void closeWhenMade(CompletableFuture<LockClient> client) {
    client.thenAccept(LockClient::close);
  }
}
