package io.dlock;

import org.jspecify.annotations.Nullable;

/**
 * The backend could not be reached, or did not answer, within the allowed time. Nothing is held
 * because of the failed call
 */
public class BackendUnavailableException extends LockException {
  private static final long serialVersionUID = 1L;

  public BackendUnavailableException(String message) {
    super(message, null);
  }

  public BackendUnavailableException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
