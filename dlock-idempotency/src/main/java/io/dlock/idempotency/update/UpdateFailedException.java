package io.dlock.idempotency.update;

import org.jspecify.annotations.Nullable;

/**
 * The database failed to run an update (an SQL error, a lost connection, an interrupt during
 * backoff). Unchecked; the update may or may not have been applied if the error came after the
 * statement was sent.
 */
public class UpdateFailedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public UpdateFailedException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
