package io.dlock.core;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** Runs a call on a thread of its own, as another caller of the client would. */
final class OnAnotherThread {
  private OnAnotherThread() {}

  /** The future completes with what {@code call} returned, or with what it threw. */
  static CompletableFuture<Object> call(Callable<?> call) {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    new Thread(
            () -> {
              try {
                outcome.complete(call.call());
              } catch (Throwable t) {
                outcome.complete(t);
              }
            })
        .start();
    return outcome;
  }
}
