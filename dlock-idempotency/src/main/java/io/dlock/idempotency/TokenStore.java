package io.dlock.idempotency;

import java.time.Duration;

/**
 * One-time tokens: issued before a request, consumed exactly once by it ("consume first"). Of any
 * number of concurrent {@link #consume} calls with one token, exactly one gets {@link
 * TokenConsumption#CONSUMED}: the check and the consumption are one atomic step on the server (a
 * Lua script on Redis, one conditional {@code UPDATE} on a database). Expiry is judged by the
 * server's clock.
 *
 * <p>A consumed token is remembered as a tombstone, and an expired one as expired, for the store's
 * retention, so that the answer says which case it is; after that the token is {@link
 * TokenConsumption#UNKNOWN}.
 *
 * <p>Consume first, then do the work: if the work then fails, the client must fetch a new token.
 * Failures of the store throw {@link IdempotencyStoreException}; a consumption whose answer was
 * lost may have happened, and a retry then says {@link TokenConsumption#ALREADY_CONSUMED}.
 */
public interface TokenStore {

  /** The shortest time to live accepted. */
  Duration MIN_TIME_TO_LIVE = Duration.ofMillis(10);

  /** The longest time to live accepted. */
  Duration MAX_TIME_TO_LIVE = Duration.ofDays(30);

  /**
   * Issues a new token.
   *
   * @param timeToLive from {@link #MIN_TIME_TO_LIVE} to {@link #MAX_TIME_TO_LIVE}
   * @throws IllegalArgumentException if {@code timeToLive} is out of range
   * @throws IdempotencyStoreException if the store failed
   */
  IssuedToken issue(Duration timeToLive);

  /**
   * Consumes {@code token} if it is valid; says which case it is otherwise.
   *
   * @param token a value from {@link #issue}; anything else is {@link TokenConsumption#UNKNOWN}
   * @throws IdempotencyStoreException if the store failed
   */
  TokenConsumption consume(String token);
}
