package io.dlock.spi;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** The answer to one acquisition attempt: granted, or held by someone else. */
public sealed interface AcquireResult {

  /**
   * The lock is now held by the requesting owner.
   *
   * @param fencingToken the grant's fencing token (unchanged for a re-entry by the same owner)
   * @param holdCount the hold count kept on the server after this attempt
   */
  record Granted(long fencingToken, int holdCount) implements AcquireResult {}

  /**
   * Another owner holds the lock.
   *
   * @param holderRemaining how long the holder's lease lasts at most without renewal, as judged by
   *     the server; null if the backend cannot tell (the core then waits for a release signal)
   */
  record Held(@Nullable Duration holderRemaining) implements AcquireResult {}
}
