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
   * <p>Safe to repeat: if the record is {@code owner}'s own claim, still in progress (this claim
   * was made before and its answer lost, or the client library sent it twice), the answer is {@link
   * ClaimAttempt.Kind#CLAIMED} again and the in-progress timeout starts again from now.
   *
   * @param key 1 to {@link DedupRecords#MAX_KEY_LENGTH} characters, checked by the caller
   * @param fingerprint what identifies the request (empty when unused), at most 128 characters
   * @param owner identifies this claim, and a repeat of it: a fresh random token, or the hash of
   *     the caller's request id; at most 64 characters
   */
  ClaimAttempt tryClaim(String key, String fingerprint, String owner, Duration inProgressTimeout);

  /**
   * Completes {@code owner}'s in-progress claim of {@code key} with {@code result}, kept for {@code
   * retention}.
   *
   * @return false if the record is no longer {@code owner}'s in-progress claim (it expired, and
   *     perhaps another caller claimed it): nothing was written. True also for a repeat: the record
   *     is already completed by {@code owner} (the first call's answer was lost)
   */
  boolean complete(String key, String owner, byte[] result, Duration retention);

  /**
   * Marks {@code owner}'s in-progress claim of {@code key} failed: the next claim takes it over at
   * once. The failed record is kept for {@code retention} (for inspection only).
   *
   * @return false if the record is no longer {@code owner}'s in-progress claim; true also for a
   *     repeat: the record is already failed by {@code owner}
   */
  boolean fail(String key, String owner, Duration retention);
}
