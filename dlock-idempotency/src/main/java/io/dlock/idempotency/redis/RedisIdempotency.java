package io.dlock.idempotency.redis;

import io.dlock.idempotency.DedupStore;
import io.dlock.idempotency.IdempotencyStoreException;
import io.dlock.idempotency.TokenStore;
import io.dlock.redis.script.RedisScript;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * One Lettuce connection to Redis for the idempotency stores: {@link #tokenStore()} and {@link
 * #dedupStore()} share it (it is multiplexed and thread-safe). Close it when the application stops.
 *
 * <pre>{@code
 * try (RedisIdempotency redis = RedisIdempotency.connect("redis://localhost:6379")) {
 *   TokenStore tokens = redis.tokenStore();
 *   DedupRecords records = DedupRecords.on(redis.dedupStore());
 * }
 * }</pre>
 */
public final class RedisIdempotency implements AutoCloseable {
  private final RedisIdempotencySettings settings;
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> redis;
  final RedisScript issueToken;
  final RedisScript consumeToken;
  final RedisScript claim;
  final RedisScript finish;

  private RedisIdempotency(
      RedisIdempotencySettings settings,
      RedisClient client,
      StatefulRedisConnection<String, String> connection) {
    this.settings = settings;
    this.client = client;
    this.connection = connection;
    this.redis = connection.sync();
    this.issueToken = script("token-issue.lua", ScriptOutputType.INTEGER);
    this.consumeToken = script("token-consume.lua", ScriptOutputType.VALUE);
    this.claim = script("dedup-claim.lua", ScriptOutputType.MULTI);
    this.finish = script("dedup-finish.lua", ScriptOutputType.INTEGER);
  }

  /** A script of this package's resources; its calls wait for the answer ({@link #redis()}). */
  private RedisScript script(String resource, ScriptOutputType outputType) {
    return RedisScript.load(RedisIdempotency.class, resource, outputType, redis);
  }

  /** Connects to {@code uri} with default settings. */
  public static RedisIdempotency connect(String uri) {
    return connect(RedisIdempotencySettings.of(uri));
  }

  /**
   * Connects with these settings.
   *
   * @throws IdempotencyStoreException if the server cannot be reached
   */
  public static RedisIdempotency connect(RedisIdempotencySettings settings) {
    RedisURI uri;
    try {
      uri = RedisURI.create(settings.uri());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("uri is not a valid Redis URI: " + e.getMessage(), e);
    }
    uri.setTimeout(settings.commandTimeout());
    char[] password = settings.password();
    if (password != null) {
      settings.username().ifPresent(uri::setUsername);
      uri.setPassword(password);
    }
    // On shared resources, shutdown() leaves them running: Lettuce shuts down only its own.
    RedisClient client =
        settings
            .clientResources()
            .map(resources -> RedisClient.create(resources, uri))
            .orElseGet(() -> RedisClient.create(uri));
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(true)
            // Fail at once while disconnected instead of queueing: every call stays bounded.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
            .socketOptions(
                SocketOptions.builder()
                    .connectTimeout(settings.commandTimeout())
                    .keepAlive(true)
                    .build())
            .sslOptions(settings.sslOptions().orElseGet(SslOptions::create))
            .build());
    try {
      return new RedisIdempotency(settings, client, client.connect(StringCodec.UTF8));
    } catch (RuntimeException e) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
      throw new IdempotencyStoreException("Cannot connect to Redis: " + e.getMessage(), e);
    } catch (LinkageError e) {
      // dlock-redis (whose script loader the stores use) is an optional dependency: say so.
      client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
      throw new IllegalStateException(
          "The Redis idempotency stores need io.dlock:dlock-redis on the class path: " + e, e);
    }
  }

  /** One-time tokens on this connection, with the settings' tombstone retention. */
  public TokenStore tokenStore() {
    return new RedisTokenStore(this);
  }

  /** Dedup records on this connection; wrap it in {@code DedupRecords.on(...)}. */
  public DedupStore dedupStore() {
    return new RedisDedupStore(this);
  }

  RedisIdempotencySettings settings() {
    return settings;
  }

  RedisCommands<String, String> redis() {
    return redis;
  }

  /** Runs one Redis call, turning Lettuce's failures into {@link IdempotencyStoreException}. */
  <T> T call(String what, Supplier<T> call) {
    try {
      return call.get();
    } catch (RedisException e) {
      throw new IdempotencyStoreException("Redis failed to " + what + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    try {
      connection.close();
    } finally {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
  }
}
