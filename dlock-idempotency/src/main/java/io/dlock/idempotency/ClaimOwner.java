package io.dlock.idempotency;

import java.util.Objects;

/**
 * The {@code owner} of a {@link DedupStore} call, parsed: which request claims a key, and which
 * attempt of it. {@link DedupRecords} makes them; a store reads them with {@link #parse}.
 *
 * <p>Why an attempt: a request that may be retried (one with a request id) must get its own claim
 * back when the answer of its first claim was lost, but must not get it while an earlier attempt of
 * it was answered and is doing the work. The store cannot tell the two apart by itself, so each
 * call brings a fresh attempt token, and the attempt that learns of its claim confirms it ({@link
 * DedupStore#confirm}) before the work starts. A repeat of the request takes over its claim only
 * while the claim is unconfirmed; once confirmed, a repeat is {@link
 * ClaimAttempt.Kind#IN_PROGRESS}.
 *
 * <p>Text form (the {@code owner} strings of the SPI): {@code request} alone for a claim that needs
 * no confirmation (a call without a request id: its owner is a fresh token, which only a re-send of
 * the same command repeats); {@code request/attempt} for an attempt of a request that may be
 * retried; {@code !request/attempt} for the confirmation of that attempt's claim. Requests and
 * attempts are base64url tokens, so neither separator occurs in them.
 *
 * @param request the request: a random token, or the hash of the caller's request id
 * @param attempt the attempt, a fresh random token per call; empty for a claim without attempts
 * @param confirmation whether this is the confirmation of {@code attempt}'s claim, not a claim
 */
public record ClaimOwner(String request, String attempt, boolean confirmation) {
  /** The longest request and attempt accepted, in characters. */
  public static final int MAX_PART_LENGTH = 64;

  private static final char ATTEMPT_SEPARATOR = '/';
  private static final char CONFIRMATION_MARK = '!';

  public ClaimOwner {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(attempt, "attempt");
    check("request", request, 1);
    check("attempt", attempt, 0);
    if (confirmation && attempt.isEmpty()) {
      throw new IllegalArgumentException("owner: only a claim with an attempt is confirmed");
    }
  }

  /** A claim that needs no confirmation: a call whose owner only a re-send of it repeats. */
  public static ClaimOwner single(String request) {
    return new ClaimOwner(request, "", false);
  }

  /** A claim by a fresh attempt of {@code request}, to be confirmed before the work starts. */
  public static ClaimOwner newAttempt(String request) {
    return new ClaimOwner(request, Tokens.newToken(), false);
  }

  /** Parses an {@code owner} string of the SPI. */
  public static ClaimOwner parse(String owner) {
    Objects.requireNonNull(owner, "owner");
    boolean confirmation = !owner.isEmpty() && owner.charAt(0) == CONFIRMATION_MARK;
    String rest = confirmation ? owner.substring(1) : owner;
    int separator = rest.indexOf(ATTEMPT_SEPARATOR);
    return separator < 0
        ? new ClaimOwner(rest, "", confirmation)
        : new ClaimOwner(rest.substring(0, separator), rest.substring(separator + 1), confirmation);
  }

  /** The confirmation of this attempt's claim. */
  public ClaimOwner toConfirmation() {
    return new ClaimOwner(request, attempt, true);
  }

  /** Whether this claim must be confirmed before its work starts (it has an attempt). */
  public boolean needsConfirmation() {
    return !attempt.isEmpty();
  }

  /** The {@code owner} string of the SPI. */
  @Override
  public String toString() {
    return (confirmation ? String.valueOf(CONFIRMATION_MARK) : "")
        + request
        + (attempt.isEmpty() ? "" : ATTEMPT_SEPARATOR + attempt);
  }

  private static void check(String part, String value, int min) {
    if (value.length() < min || value.length() > MAX_PART_LENGTH) {
      throw new IllegalArgumentException(
          "owner: the "
              + part
              + " must have "
              + min
              + " to "
              + MAX_PART_LENGTH
              + " characters, but has "
              + value.length());
    }
    if (value.indexOf(ATTEMPT_SEPARATOR) >= 0
        || value.indexOf(CONFIRMATION_MARK) >= 0
        || value.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(
          "owner: the " + part + " must not contain '/', '!' or control characters");
    }
  }
}
