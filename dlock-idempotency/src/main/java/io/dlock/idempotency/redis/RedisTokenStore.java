package io.dlock.idempotency.redis;

import io.dlock.idempotency.IssuedToken;
import io.dlock.idempotency.TokenConsumption;
import io.dlock.idempotency.TokenStore;
import io.dlock.idempotency.Tokens;
import java.time.Duration;
import java.util.Objects;

/**
 * One-time tokens on Redis. A token's key ({@code prefix token: sha256(token)}) holds its expiry by
 * the server's clock and lives for the time to live plus the retention; consuming it is one Lua
 * script that checks it and replaces it by a "consumed" tombstone kept for the retention. So of
 * concurrent consumers exactly one wins, and the others learn that the token was consumed. The
 * tombstone names the winning request (the hash of its request id), so that the same request run
 * again (its answer lost, or re-sent by Lettuce after a reconnect) is told it consumed the token.
 * After the retention the token is unknown.
 */
final class RedisTokenStore implements TokenStore {
  private final RedisIdempotency redis;
  private final String prefix;
  private final String retentionMillis;

  RedisTokenStore(RedisIdempotency redis) {
    this.redis = redis;
    this.prefix = redis.settings().keyPrefix() + "token:";
    this.retentionMillis = Long.toString(redis.settings().tokenRetention().toMillis());
  }

  @Override
  public IssuedToken issue(Duration timeToLive) {
    Tokens.checkTimeToLive(timeToLive);
    String token = Tokens.newToken();
    redis.<Long>call(
        "issue a token",
        () ->
            redis.issueToken.call(
                redis.redis(),
                prefix + Tokens.sha256Hex(token),
                Long.toString(timeToLive.toMillis()),
                retentionMillis));
    return new IssuedToken(token, timeToLive);
  }

  @Override
  public TokenConsumption consume(String token, String requestId) {
    Objects.requireNonNull(token, "token");
    String request = Tokens.requestIdHash(requestId);
    String answer =
        redis.call(
            "consume a token",
            () ->
                redis.consumeToken.call(
                    redis.redis(), prefix + Tokens.sha256Hex(token), retentionMillis, request));
    switch (answer) {
      case "consumed":
        return TokenConsumption.CONSUMED;
      case "already-consumed":
        return TokenConsumption.ALREADY_CONSUMED;
      case "expired":
        return TokenConsumption.EXPIRED;
      default:
        return TokenConsumption.UNKNOWN;
    }
  }
}
