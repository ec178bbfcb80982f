package io.dlock.idempotency.redis;

import io.dlock.idempotency.Tokens;
import io.lettuce.core.SslOptions;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Where and how the Redis stores keep their keys. An immutable value; the {@code with...} methods
 * return modified copies and validate their argument.
 *
 * <p>Defaults: key prefix {@code dlock:idem:}, command timeout 5 s, token tombstones kept 24 h, no
 * credentials beyond the URI's, Lettuce resources of the connection's own, the JDK's TLS defaults.
 */
public final class RedisIdempotencySettings {
  private static final Duration MIN_TIMEOUT = Duration.ofMillis(1);
  private static final Duration MAX_TIMEOUT = Duration.ofMinutes(5);
  private static final Duration MIN_RETENTION = Duration.ofMillis(100);
  private static final Duration MAX_RETENTION = Duration.ofDays(400);

  private final String uri;
  private final String keyPrefix;
  private final Duration commandTimeout;
  private final Duration tokenRetention;
  private final @Nullable String username;
  private final char @Nullable [] password;
  private final @Nullable ClientResources clientResources;
  private final @Nullable SslOptions sslOptions;

  private RedisIdempotencySettings(Copy c) {
    this.uri = c.uri;
    this.keyPrefix = c.keyPrefix;
    this.commandTimeout = c.commandTimeout;
    this.tokenRetention = c.tokenRetention;
    this.username = c.username;
    this.password = c.password;
    this.clientResources = c.clientResources;
    this.sslOptions = c.sslOptions;
  }

  /** The mutable copy every {@code with...} changes one field of before building a new value. */
  private static final class Copy {
    final String uri;
    String keyPrefix = "dlock:idem:";
    Duration commandTimeout = Duration.ofSeconds(5);
    Duration tokenRetention = Duration.ofHours(24);
    @Nullable String username;
    char @Nullable [] password;
    @Nullable ClientResources clientResources;
    @Nullable SslOptions sslOptions;

    Copy(String uri) {
      this.uri = uri;
    }

    Copy(RedisIdempotencySettings s) {
      uri = s.uri;
      keyPrefix = s.keyPrefix;
      commandTimeout = s.commandTimeout;
      tokenRetention = s.tokenRetention;
      username = s.username;
      password = s.password;
      clientResources = s.clientResources;
      sslOptions = s.sslOptions;
    }
  }

  /**
   * Settings for the server at {@code uri}.
   *
   * @param uri {@code redis://}, {@code rediss://} or {@code redis-sentinel://}
   */
  public static RedisIdempotencySettings of(String uri) {
    Objects.requireNonNull(uri, "uri");
    if (!uri.startsWith("redis://")
        && !uri.startsWith("rediss://")
        && !uri.startsWith("redis-sentinel://")) {
      throw new IllegalArgumentException(
          "uri must start with redis://, rediss:// or redis-sentinel://");
    }
    return new RedisIdempotencySettings(new Copy(uri));
  }

  /**
   * The same settings with this key prefix (keys are the prefix, {@code token:} or {@code dedup:},
   * and the token hash or the dedup key).
   *
   * @param keyPrefix 0 to 100 characters, no control characters
   */
  public RedisIdempotencySettings withKeyPrefix(String keyPrefix) {
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    if (keyPrefix.length() > 100 || keyPrefix.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(
          "keyPrefix must have 0 to 100 characters and no control characters");
    }
    Copy c = new Copy(this);
    c.keyPrefix = keyPrefix;
    return new RedisIdempotencySettings(c);
  }

  /**
   * The same settings with this command timeout: a command without an answer in time throws.
   *
   * @param timeout from 1 ms to 5 min
   */
  public RedisIdempotencySettings withCommandTimeout(Duration timeout) {
    Copy c = new Copy(this);
    c.commandTimeout = Tokens.checkRange("commandTimeout", timeout, MIN_TIMEOUT, MAX_TIMEOUT);
    return new RedisIdempotencySettings(c);
  }

  /**
   * The same settings with this token retention: how long a consumed token is remembered as
   * consumed, and an expired one as expired, before either becomes unknown.
   *
   * @param retention from 100 ms to 400 days
   */
  public RedisIdempotencySettings withTokenRetention(Duration retention) {
    Copy c = new Copy(this);
    c.tokenRetention = Tokens.checkRange("tokenRetention", retention, MIN_RETENTION, MAX_RETENTION);
    return new RedisIdempotencySettings(c);
  }

  /**
   * The same settings with these credentials (a Redis 6 ACL user, or only a password for {@code
   * requirepass}), kept out of the URI; they replace any in it.
   *
   * @param username the ACL user, or null for the default user
   * @param password the password
   */
  public RedisIdempotencySettings withCredentials(@Nullable String username, char[] password) {
    Objects.requireNonNull(password, "password");
    Copy c = new Copy(this);
    c.username = username;
    c.password = password.clone();
    return new RedisIdempotencySettings(c);
  }

  /**
   * The same settings, with the connection on these Lettuce resources (event loops, timers), for
   * example an application's, instead of resources of its own. Closing {@link RedisIdempotency}
   * never shuts them down: their owner does, after closing it.
   */
  public RedisIdempotencySettings withClientResources(ClientResources clientResources) {
    Copy c = new Copy(this);
    c.clientResources = Objects.requireNonNull(clientResources, "clientResources");
    return new RedisIdempotencySettings(c);
  }

  /**
   * The same settings with these TLS options (key store, trust store, protocols) for a {@code
   * rediss://} URI, for example from a Spring Boot SSL bundle; without them the JDK's defaults
   * apply.
   */
  public RedisIdempotencySettings withSslOptions(SslOptions sslOptions) {
    Copy c = new Copy(this);
    c.sslOptions = Objects.requireNonNull(sslOptions, "sslOptions");
    return new RedisIdempotencySettings(c);
  }

  public String uri() {
    return uri;
  }

  public String keyPrefix() {
    return keyPrefix;
  }

  public Duration commandTimeout() {
    return commandTimeout;
  }

  public Duration tokenRetention() {
    return tokenRetention;
  }

  Optional<String> username() {
    return Optional.ofNullable(username);
  }

  char @Nullable [] password() {
    return password == null ? null : password.clone();
  }

  Optional<ClientResources> clientResources() {
    return Optional.ofNullable(clientResources);
  }

  Optional<SslOptions> sslOptions() {
    return Optional.ofNullable(sslOptions);
  }

  @Override
  public String toString() {
    // The URI may hold a password.
    return "RedisIdempotencySettings[keyPrefix="
        + keyPrefix
        + ", commandTimeout="
        + commandTimeout
        + ", tokenRetention="
        + tokenRetention
        + "]";
  }
}
