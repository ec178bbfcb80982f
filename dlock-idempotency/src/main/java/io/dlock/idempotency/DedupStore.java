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
   * <p>Safe to repeat, and safe to retry (see {@link ClaimOwner}): the same owner again (a re-send
   * of this very call by the client library) is {@link ClaimAttempt.Kind#CLAIMED} again, and the
   * in-progress timeout starts again from now. Another attempt of the same request takes the claim
   * over (with the same answer) only while the claim is unconfirmed: the attempt that made it never
   * learned of it, its answer was lost. A confirmed claim is {@link ClaimAttempt.Kind#IN_PROGRESS}
   * for every other attempt: the attempt that confirmed it may be doing the work. A claim without
   * an attempt is confirmed when it is made.
   *
   * <p>An {@code owner} that is a {@linkplain ClaimOwner#confirmation() confirmation} is not a
   * claim: see {@link #confirm}. Implementations handle it here so that a decorator forwarding this
   * method forwards confirmations too.
   *
   * @param key 1 to {@link DedupRecords#MAX_KEY_LENGTH} characters, checked by the caller
   * @param fingerprint what identifies the request (empty when unused), at most 128 characters
   * @param owner the {@link ClaimOwner} in its text form: a fresh random token, or the hash of the
   *     caller's request id with an attempt token
   */
  ClaimAttempt tryClaim(String key, String fingerprint, String owner, Duration inProgressTimeout);

  /**
   * Confirms the claim {@code owner} made: {@link ClaimAttempt.Kind#CLAIMED} if the record is still
   * that attempt's in-progress claim, which is then not taken over by another attempt of its
   * request before it expires; otherwise {@link ClaimAttempt.Kind#IN_PROGRESS} (with the record's
   * remaining time, zero when it is not in progress), and the attempt must not do the work. Never
   * creates, takes over or extends a record. Safe to repeat.
   *
   * <p>The default sends the {@linkplain ClaimOwner#toConfirmation() confirmation} through {@link
   * #tryClaim}; implementations need not override it.
   *
   * @param owner the {@link ClaimOwner} of the claim, with an attempt
   */
  default ClaimAttempt confirm(
      String key, String fingerprint, String owner, Duration inProgressTimeout) {
    String confirmation = ClaimOwner.parse(owner).toConfirmation().toString();
    return tryClaim(key, fingerprint, confirmation, inProgressTimeout);
  }

  /**
   * Completes {@code owner}'s in-progress claim of {@code key} with {@code result}, kept for {@code
   * retention}. The owner is compared with its attempt: another attempt of the same request does
   * not complete this one's claim.
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
