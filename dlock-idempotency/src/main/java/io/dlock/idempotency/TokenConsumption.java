package io.dlock.idempotency;

/**
 * What {@link TokenStore#consume} found. Only {@link #CONSUMED} lets the request proceed; the other
 * three say why it must not.
 */
public enum TokenConsumption {
  /** The token was valid and is now consumed: this caller, and no other, may proceed. */
  CONSUMED,
  /** The token was consumed before (a retry or a replay); kept as a tombstone for the retention. */
  ALREADY_CONSUMED,
  /** The token was issued but its time to live ran out before it was consumed. */
  EXPIRED,
  /**
   * The store never issued this token, or it was forgotten: consumed or expired longer ago than the
   * retention.
   */
  UNKNOWN
}
