package io.dlock.idempotency;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link DedupStore#tryClaim} found; a value of the SPI, turned into a {@link ClaimOutcome} by
 * {@link DedupRecords}.
 *
 * @param kind which case
 * @param result the stored result, only for {@link Kind#COMPLETED}
 * @param remaining how long an in-progress record has left, only for {@link Kind#IN_PROGRESS}
 */
public record ClaimAttempt(Kind kind, byte @Nullable [] result, Duration remaining) {

  /** The cases of a claim. */
  public enum Kind {
    /**
     * The caller now owns an in-progress record: claimed now, by a re-send of this call, or taken
     * over from an unconfirmed attempt of its request; for a confirmation, the claim is confirmed.
     */
    CLAIMED,
    /**
     * Another caller's claim (or a confirmed one of another attempt of the request) is running and
     * has not expired; for a confirmation, the claim is no longer this attempt's.
     */
    IN_PROGRESS,
    /** The key's work is done; its result is stored. */
    COMPLETED,
    /** The record was made for a request with a different fingerprint. */
    FINGERPRINT_MISMATCH
  }

  public ClaimAttempt {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(remaining, "remaining");
    if (kind == Kind.COMPLETED && result == null) {
      throw new IllegalArgumentException("result must be given for a completed record");
    }
  }

  public static ClaimAttempt claimed() {
    return new ClaimAttempt(Kind.CLAIMED, null, Duration.ZERO);
  }

  public static ClaimAttempt inProgress(Duration remaining) {
    return new ClaimAttempt(
        Kind.IN_PROGRESS, null, remaining.isNegative() ? Duration.ZERO : remaining);
  }

  public static ClaimAttempt completed(byte[] result) {
    return new ClaimAttempt(Kind.COMPLETED, result, Duration.ZERO);
  }

  public static ClaimAttempt fingerprintMismatch() {
    return new ClaimAttempt(Kind.FINGERPRINT_MISMATCH, null, Duration.ZERO);
  }
}
