package io.dlock.redis;

import io.dlock.spi.Failures;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * A Lua script kept as a resource, called by its SHA-1 with keys and values always passed as KEYS
 * and ARGV; if the server lost its script cache (restart, {@code SCRIPT FLUSH}), the script is sent
 * again once and the call repeated.
 */
final class LuaScript {
  private final String name;
  private final String source;
  private final String sha;

  private LuaScript(String name, String source, String sha) {
    this.name = name;
    this.source = source;
    this.sha = sha;
  }

  static LuaScript load(String resource, RedisClusterAsyncCommands<String, String> commands) {
    String source = read(resource);
    return new LuaScript(resource, source, commands.digest(source));
  }

  String name() {
    return name;
  }

  String source() {
    return source;
  }

  String sha() {
    return sha;
  }

  <T> CompletableFuture<T> call(
      RedisClusterAsyncCommands<String, String> commands, String[] keys, String... args) {
    CompletableFuture<T> first =
        commands.<T>evalsha(sha, ScriptOutputType.MULTI, keys, args).toCompletableFuture();
    return first
        .handle(
            (result, error) -> {
              if (error == null) {
                return CompletableFuture.completedFuture(result);
              }
              Throwable cause = Failures.unwrap(error);
              if (cause instanceof RedisNoScriptException) {
                return commands
                    .scriptLoad(source)
                    .toCompletableFuture()
                    .thenCompose(
                        loaded ->
                            commands
                                .<T>evalsha(sha, ScriptOutputType.MULTI, keys, args)
                                .toCompletableFuture());
              }
              return CompletableFuture.<T>failedFuture(cause);
            })
        .thenCompose(f -> f);
  }

  /**
   * Sends the script's source ({@code EVAL}), not its digest: one request that runs even on a
   * server that lost its script cache. For calls that must work in one send (an undo whose answer
   * may never come back), where the {@code NOSCRIPT} round trip of {@link #call} would come too
   * late.
   */
  <T> CompletableFuture<T> callWithSource(
      RedisClusterAsyncCommands<String, String> commands, String[] keys, String... args) {
    return commands.<T>eval(source, ScriptOutputType.MULTI, keys, args).toCompletableFuture();
  }

  private static String read(String resource) {
    try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("Missing script resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
