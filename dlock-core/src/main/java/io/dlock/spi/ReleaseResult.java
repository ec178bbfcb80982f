package io.dlock.spi;

/** The answer to a release. */
public enum ReleaseResult {
  /** The owner held the lock, and it is now deleted. */
  RELEASED,
  /** The owner held the lock more than once (server-side hold count); it still holds it. */
  STILL_HELD,
  /** The owner did not hold the lock: it expired, or belongs to another owner now. Untouched. */
  NOT_HELD
}
