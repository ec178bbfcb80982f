package io.dlock;

import org.jspecify.annotations.Nullable;

/**
 * The base of every exception dlock throws about locks. Unchecked, so that try-with-resources stays
 * short.
 */
public abstract class LockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  protected LockException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
