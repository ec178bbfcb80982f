package io.dlock.idempotency.redis;

import io.dlock.idempotency.Tokens;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how the Redis stores keep their keys. An immutable value; the {@code with...} methods
 * return modified copies and validate their argument.
 *
 * <p>Defaults: key prefix {@code dlock:idem:}, command timeout 5 s, token tombstones kept 24 h.
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

  private RedisIdempotencySettings(
      String uri, String keyPrefix, Duration commandTimeout, Duration tokenRetention) {
    this.uri = uri;
    this.keyPrefix = keyPrefix;
    this.commandTimeout = commandTimeout;
    this.tokenRetention = tokenRetention;
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
    return new RedisIdempotencySettings(
        uri, "dlock:idem:", Duration.ofSeconds(5), Duration.ofHours(24));
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
    return new RedisIdempotencySettings(uri, keyPrefix, commandTimeout, tokenRetention);
  }

  /**
   * The same settings with this command timeout: a command without an answer in time throws.
   *
   * @param timeout from 1 ms to 5 min
   */
  public RedisIdempotencySettings withCommandTimeout(Duration timeout) {
    return new RedisIdempotencySettings(
        uri,
        keyPrefix,
        Tokens.checkRange("commandTimeout", timeout, MIN_TIMEOUT, MAX_TIMEOUT),
        tokenRetention);
  }

  /**
   * The same settings with this token retention: how long a consumed token is remembered as
   * consumed, and an expired one as expired, before either becomes unknown.
   *
   * @param retention from 100 ms to 400 days
   */
  public RedisIdempotencySettings withTokenRetention(Duration retention) {
    return new RedisIdempotencySettings(
        uri,
        keyPrefix,
        commandTimeout,
        Tokens.checkRange("tokenRetention", retention, MIN_RETENTION, MAX_RETENTION));
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
