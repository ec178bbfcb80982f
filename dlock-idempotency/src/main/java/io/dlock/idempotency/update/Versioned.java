package io.dlock.idempotency.update;

import java.util.Objects;

/**
 * A value read together with the version of its row.
 *
 * @param value the value as read
 * @param version the row's version when it was read; the write succeeds only if it is unchanged
 */
public record Versioned<T>(T value, long version) {
  public Versioned {
    Objects.requireNonNull(value, "value");
  }
}
