package io.dlock;

import org.jspecify.annotations.Nullable;

/** The lock was not acquired within the caller's wait bound */
public class LockTimeoutException extends LockException {
  private static final long serialVersionUID = 1L;

  public LockTimeoutException(String message) {
    super(message, null);
  }

  public LockTimeoutException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
