package io.dlock.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * A token or dedup store could not be reached, or failed, so the outcome of the call is unknown: a
 * token may or may not have been consumed, a record may or may not have been written. Unchecked.
 * Retrying is safe: a token is still consumed at most once, a record still claimed by one caller.
 * To learn the outcome, retry with the same request id ({@link TokenStore#consume(String, String)},
 * {@link DedupRecords#claim(String, String, String)}): a repeat of the same request gets the first
 * call's outcome; a retry without one is another request.
 */
public class IdempotencyStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public IdempotencyStoreException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
