package io.dlock.redis.script;

import io.dlock.spi.Failures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Lua script kept as a class-path resource, called by its SHA-1 ({@code EVALSHA}) with keys and
 * values always passed as {@code KEYS} and {@code ARGV}, never spliced into the source. If the
 * server lost its script cache (restart, failover, {@code SCRIPT FLUSH}), the {@code NOSCRIPT}
 * answer makes the call repeat itself once with the script's source ({@code EVAL}), which the
 * server then caches.
 *
 * <p>A building block for dlock modules, not part of the lock API (see {@linkplain
 * io.dlock.redis.script the package}). Immutable and thread-safe; one instance serves any number of
 * connections of the same script charset (Lettuce's default, UTF-8).
 */
public final class RedisScript {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RedisScript.class);

  private final String name;
  private final String source;
  private final String sha;
  private final ScriptOutputType outputType;

  private RedisScript(String name, String source, String sha, ScriptOutputType outputType) {
    this.name = name;
    this.source = source;
    this.sha = sha;
    this.outputType = outputType;
  }

  /**
   * Reads the script {@code resource} (a name relative to {@code anchor}'s package, as {@link
   * Class#getResourceAsStream} reads it) and takes its digest as {@code commands} computes it.
   * Nothing is sent to the server: the first call loads the script.
   *
   * @param outputType how every call of the script decodes its answer
   * @throws IllegalStateException if there is no such resource
   */
  public static RedisScript load(
      Class<?> anchor,
      String resource,
      ScriptOutputType outputType,
      RedisScriptingCommands<String, String> commands) {
    String source = read(anchor, resource);
    return new RedisScript(
        resource, source, commands.digest(source), Objects.requireNonNull(outputType));
  }

  /** As {@link #load(Class, String, ScriptOutputType, RedisScriptingCommands)}, for async use. */
  public static RedisScript load(
      Class<?> anchor,
      String resource,
      ScriptOutputType outputType,
      RedisScriptingAsyncCommands<String, String> commands) {
    String source = read(anchor, resource);
    return new RedisScript(
        resource, source, commands.digest(source), Objects.requireNonNull(outputType));
  }

  /** The resource the script was read from. */
  public String name() {
    return name;
  }

  public String source() {
    return source;
  }

  /** The SHA-1 digest the script is called by. */
  public String sha() {
    return sha;
  }

  public ScriptOutputType outputType() {
    return outputType;
  }

  /**
   * Sends the script to the server's script cache ({@code SCRIPT LOAD}) without waiting, so that
   * its first call finds it there: commands on one open connection run in order, so a call sent
   * after this on it finds the script loaded (in Cluster, Lettuce sends the load to every node, and
   * a call racing a node connection still being opened may meet one {@code NOSCRIPT}). Best effort:
   * if the load fails, the first call still loads the script on {@code NOSCRIPT}.
   */
  public void preload(RedisScriptingAsyncCommands<String, String> commands) {
    try {
      commands
          .scriptLoad(source)
          .whenComplete(
              (sha1, error) -> {
                if (error != null) {
                  log.debug("Could not preload {}: {}", name, error.toString());
                }
              });
    } catch (RuntimeException e) {
      // A Cluster connection can refuse at once (its topology changing): never fail the caller.
      log.debug("Could not preload {}: {}", name, e.toString());
    }
  }

  /**
   * Runs the script and waits for its answer. Lettuce's failures are thrown as they are ({@link
   * io.lettuce.core.RedisException} and its subclasses); a {@code NOSCRIPT} answer is not one of
   * them: the call is repeated with the source, as in {@link #callAsync}.
   */
  public <T> T call(
      RedisScriptingCommands<String, String> commands, String[] keys, String... args) {
    try {
      return commands.evalsha(sha, outputType, keys, args);
    } catch (RedisNoScriptException e) {
      return commands.eval(source, outputType, keys, args);
    }
  }

  /** {@link #call(RedisScriptingCommands, String[], String...)} with one key. */
  public <T> T call(RedisScriptingCommands<String, String> commands, String key, String... args) {
    return call(commands, new String[] {key}, args);
  }

  /**
   * Runs the script without waiting. The future fails with the failure of the first call, unwrapped
   * ({@link Failures#unwrap}), unless that was {@code NOSCRIPT}: then with the failure of the
   * repeated call ({@code EVAL} of the source, routed by the key as the first call was), as Lettuce
   * reports it.
   *
   * <p>Completing the returned future from outside (a caller's timeout, a cancellation) cancels the
   * command still in flight: a command not yet written is then never sent, and one on the wire no
   * longer waits in Lettuce's queue for its answer (issue 29: a silent server's timed-out calls
   * were left to pile up until the command timeout).
   */
  public <T> CompletableFuture<T> callAsync(
      RedisScriptingAsyncCommands<String, String> commands, String[] keys, String... args) {
    CompletableFuture<T> result = new CompletableFuture<>();
    AtomicReference<Future<?>> inFlight = new AtomicReference<>();
    RedisFuture<T> first = commands.evalsha(sha, outputType, keys, args);
    inFlight.set(first);
    first.whenComplete(
        (value, error) -> {
          if (error == null) {
            result.complete(value);
            return;
          }
          Throwable cause = Failures.unwrap(error);
          if (!(cause instanceof RedisNoScriptException) || result.isDone()) {
            result.completeExceptionally(cause);
            return;
          }
          // The source itself, not SCRIPT LOAD and the digest again: one round trip, and routed
          // by the key like the call. On a Cluster connection Lettuce sends SCRIPT LOAD to every
          // node, which fails while any node is down, failing calls to the healthy ones (issue
          // 29). The server caches a script it ran, so the next call by digest finds it.
          RedisFuture<T> again = commands.eval(source, outputType, keys, args);
          inFlight.set(again);
          again.whenComplete(
              (v, e) -> {
                if (e != null) {
                  result.completeExceptionally(e);
                } else {
                  result.complete(v);
                }
              });
        });
    return cancellingOnEarlyCompletion(result, inFlight);
  }

  /**
   * When {@code result} completes before the command in {@code inFlight} (completed from outside: a
   * timeout, a cancellation), cancels that command.
   */
  private static <T> CompletableFuture<T> cancellingOnEarlyCompletion(
      CompletableFuture<T> result, AtomicReference<Future<?>> inFlight) {
    result.whenComplete(
        (value, error) -> {
          Future<?> command = inFlight.get();
          if (command != null && !command.isDone()) {
            command.cancel(false);
          }
        });
    return result;
  }

  /**
   * Sends the script's source ({@code EVAL}), not its digest: one request that runs even on a
   * server that lost its script cache. For calls that must work in one send (an undo whose answer
   * may never come back), where the {@code NOSCRIPT} round trip of {@link #callAsync} would come
   * too late.
   */
  public <T> CompletableFuture<T> callWithSourceAsync(
      RedisScriptingAsyncCommands<String, String> commands, String[] keys, String... args) {
    RedisFuture<T> command = commands.eval(source, outputType, keys, args);
    CompletableFuture<T> result = new CompletableFuture<>();
    command.whenComplete(
        (value, error) -> {
          if (error != null) {
            result.completeExceptionally(error);
          } else {
            result.complete(value);
          }
        });
    return cancellingOnEarlyCompletion(result, new AtomicReference<>(command));
  }

  private static String read(Class<?> anchor, String resource) {
    try (InputStream in = anchor.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("Missing script resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String toString() {
    return "RedisScript[" + name + ", " + sha + "]";
  }
}
