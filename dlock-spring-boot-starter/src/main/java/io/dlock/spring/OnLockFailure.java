package io.dlock.spring;

/**
 * What a {@link Locked} method does when its lock is not acquired: the wait ran out ({@link
 * io.dlock.LockTimeoutException}) or the backend could not be reached ({@link
 * io.dlock.BackendUnavailableException}). An interrupted wait always throws {@link
 * io.dlock.LockInterruptedException}.
 */
public enum OnLockFailure {
  /** Throw the exception to the caller; the method does not run. The default. */
  THROW,
  /**
   * Do not run the method and return {@code null}, {@code Optional.empty()}, {@code false} or zero
   * (by return type). For jobs that another instance is already doing.
   */
  SKIP,
  /** Call the method named by {@link Locked#fallback()} instead. */
  FALLBACK
}
