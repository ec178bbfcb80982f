package io.dlock.idempotency.update;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link VersionCheckedUpdate} did.
 *
 * @param status which case
 * @param value the value written ({@link Status#APPLIED}), or the last value read ({@link
 *     Status#REJECTED}, {@link Status#CONFLICT}); empty for {@link Status#MISSING}
 * @param attempts how many read-and-write rounds ran
 */
public record VersionCheckedResult<T>(Status status, @Nullable T value, int attempts) {

  /** The cases of a version-checked update. */
  public enum Status {
    /** The new value was written over the version it was computed from. */
    APPLIED,
    /** The change function declined on the current value (e.g. not enough stock). */
    REJECTED,
    /** Every try found the version changed by another writer; nothing was written. */
    CONFLICT,
    /** The row does not exist. */
    MISSING
  }

  public boolean applied() {
    return status == Status.APPLIED;
  }

  public Optional<T> valueIfPresent() {
    return Optional.ofNullable(value);
  }
}
