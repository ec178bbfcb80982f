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
 * Failures of the store throw {@link IdempotencyStoreException}.
 *
 * <p><b>Retrying a consume whose answer was lost.</b> A consumption can reach the server and its
 * answer be lost (a connection reset, a timeout): the token is then consumed, and the caller does
 * not know it. Every consume carries a request id, stored with the tombstone; a consume of the same
 * token with the same request id gets the first one's outcome, {@link TokenConsumption#CONSUMED},
 * again (while the tombstone is retained), and any other request id gets {@link
 * TokenConsumption#ALREADY_CONSUMED}. So a caller that may retry passes its own request id to
 * {@link #consume(String, String)}, chooses it once per request and uses it on every retry of that
 * request. {@link #consume(String)} draws a fresh one for each call: a repeat inside the store (a
 * client library re-sending the command after a reconnect) is still recognised, but a retry by the
 * caller is a different request and is told {@link TokenConsumption#ALREADY_CONSUMED}.
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
   * Consumes {@code token} if it is valid, as a request of its own (a fresh request id); says which
   * case it is otherwise. A retry of this call is a new request: use {@link #consume(String,
   * String)} to retry a consume whose answer was lost.
   *
   * @param token a value from {@link #issue}; anything else is {@link TokenConsumption#UNKNOWN}
   * @throws IdempotencyStoreException if the store failed; the token may or may not be consumed
   */
  default TokenConsumption consume(String token) {
    return consume(token, Tokens.newToken());
  }

  /**
   * Consumes {@code token} for the request {@code requestId} if it is valid; says which case it is
   * otherwise. If this request consumed the token before (a retry of a call whose answer was lost),
   * the answer is {@link TokenConsumption#CONSUMED} again, for as long as the tombstone is
   * retained; another request id gets {@link TokenConsumption#ALREADY_CONSUMED}.
   *
   * <p>The request id names one request of one caller and is the same on every retry of it (an id
   * the caller made when the request arrived, a message id). Two callers using one request id are
   * one request to the store: both are told {@link TokenConsumption#CONSUMED}, so never derive it
   * from anything a client could send twice as different requests. The store keeps only its
   * SHA-256.
   *
   * <p>A consume is one step, and the work after it is the caller's: the store cannot tell a retry
   * whose first answer was lost from one whose first call was answered and is still being acted on,
   * and tells both {@link TokenConsumption#CONSUMED}. Repeat a consume with its request id only to
   * retry a call that threw; a handling that may overlap an answered one (an upstream retry after a
   * timeout, a redelivery while the first delivery is processed) needs a request id of its own, or
   * a dedup record ({@link DedupRecords#runOnce(String, String, IdempotentAction)}), whose retries
   * are told {@link RunOnceResult.InProgress} while the first attempt runs.
   *
   * @param token a value from {@link #issue}; anything else is {@link TokenConsumption#UNKNOWN}
   * @param requestId 1 to {@value Tokens#MAX_REQUEST_ID_LENGTH} characters, no control characters
   * @throws IllegalArgumentException if {@code requestId} is out of range
   * @throws IdempotencyStoreException if the store failed; the token may or may not be consumed,
   *     and a retry with the same request id says which
   */
  TokenConsumption consume(String token, String requestId);
}
