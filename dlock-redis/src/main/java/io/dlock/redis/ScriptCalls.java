package io.dlock.redis;

import io.dlock.redis.script.RedisScript;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** The script calls of one backend's command connection, counted while they await an answer. */
final class ScriptCalls {
  private final RedisClusterAsyncCommands<String, String> commands;

  /** Calls whose answer is still awaited: a silent server's calls must not pile up here. */
  private final AtomicInteger inFlight = new AtomicInteger();

  ScriptCalls(RedisClusterAsyncCommands<String, String> commands) {
    this.commands = commands;
  }

  /** Runs {@code script}, counted in {@link #inFlight()} until answered or cancelled. */
  <T> CompletableFuture<T> run(RedisScript script, String[] keys, String... args) {
    inFlight.incrementAndGet();
    CompletableFuture<T> call = script.callAsync(commands, keys, args);
    call.whenComplete((value, error) -> inFlight.decrementAndGet());
    return call;
  }

  /** Calls neither answered nor cancelled yet. */
  int inFlight() {
    return inFlight.get();
  }

  /**
   * Returns {@code derived}, and cancels {@code source} (and with it the command on the wire, see
   * {@link RedisScript#callAsync}) when {@code derived} completes first: a caller's timeout
   * (Redlock's node timeout) completes the future it holds, never the one Lettuce completes.
   */
  static <T> CompletableFuture<T> cancelling(
      CompletableFuture<?> source, CompletableFuture<T> derived) {
    derived.whenComplete(
        (value, error) -> {
          if (!source.isDone()) {
            source.cancel(false);
          }
        });
    return derived;
  }
}
