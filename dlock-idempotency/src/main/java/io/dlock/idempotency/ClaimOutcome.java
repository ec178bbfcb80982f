package io.dlock.idempotency;

import java.time.Duration;

/**
 * The answer of {@link DedupRecords#claim}: either this caller owns the key's work now ({@link
 * Claimed}, with the handle that completes it), or it must not do the work, and the outcome says
 * why.
 */
public sealed interface ClaimOutcome {

  /**
   * This caller owns the key: do the work, then {@link DedupClaim#complete} or {@link
   * DedupClaim#fail}.
   */
  record Claimed(DedupClaim claim) implements ClaimOutcome {}

  /**
   * Another caller is doing the key's work. Try again after {@code retryAfter} (when its claim
   * expires if its owner crashed; earlier it may have completed).
   */
  record InProgress(Duration retryAfter) implements ClaimOutcome {}

  /** The work was done before; {@code result} is what it stored. */
  record Completed(byte[] result) implements ClaimOutcome {}

  /** The key was used for a request with a different fingerprint: a client error. */
  record FingerprintMismatch() implements ClaimOutcome {}
}
