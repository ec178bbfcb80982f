package io.dlock;

import org.jspecify.annotations.Nullable;

/**
 * An operation needs a valid lease, but the lease was lost (expired, taken over, or its session
 * ended).
 */
public class LockLostException extends LockException {
  private static final long serialVersionUID = 1L;

  public LockLostException(String message) {
    super(message, null);
  }

  public LockLostException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
