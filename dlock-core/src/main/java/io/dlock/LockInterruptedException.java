package io.dlock;

import org.jspecify.annotations.Nullable;

/**
 * The thread was interrupted while acquiring. The interrupt flag is set again before this is
 * thrown, and nothing is held.
 */
public class LockInterruptedException extends LockException {
  private static final long serialVersionUID = 1L;

  public LockInterruptedException(String message) {
    super(message, null);
  }

  public LockInterruptedException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
