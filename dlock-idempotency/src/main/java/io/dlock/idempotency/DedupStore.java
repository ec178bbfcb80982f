package io.dlock.idempotency;

import java.time.Duration;

/**
 * The backend primitives under {@link DedupRecords}: one record per key, with a state (in progress,
 * completed with a result, failed), the claim's owner, a request fingerprint and an expiry judged
 * by the store's clock. Every method is one atomic step on the server.
 *
 * <p>Implementations: {@code RedisDedupStore} and {@code JdbcDedupStore}. Failures throw {@link
 * IdempotencyStoreException}.
 */
public interface DedupStore {

  /**
   * Claims {@code key} for {@code owner} if there is no record, or only a failed or expired one:
   * the record becomes in progress, expiring after {@code inProgressTimeout} unless completed or
   * failed before. Otherwise reports the record as it is: a different fingerprint first, then in
   * progress (with its remaining time) or completed (with its result).
   *
   * @param key 1 to {@link DedupRecords#MAX_KEY_LENGTH} characters, checked by the caller
   * @param fingerprint what identifies the request (empty when unused), at most 128 characters
   * @param owner a fresh random token identifying this claim
   */
  ClaimAttempt tryClaim(String key, String fingerprint, String owner, Duration inProgressTimeout);

  /**
   * Completes {@code owner}'s in-progress claim of {@code key} with {@code result}, kept for {@code
   * retention}.
   *
   * @return false if the record is no longer {@code owner}'s in-progress claim (it expired, and
   *     perhaps another caller claimed it): nothing was written
   */
  boolean complete(String key, String owner, byte[] result, Duration retention);

  /**
   * Marks {@code owner}'s in-progress claim of {@code key} failed: the next claim takes it over at
   * once. The failed record is kept for {@code retention} (for inspection only).
   *
   * @return false if the record is no longer {@code owner}'s in-progress claim
   */
  boolean fail(String key, String owner, Duration retention);
}
