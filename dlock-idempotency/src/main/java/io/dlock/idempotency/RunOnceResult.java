package io.dlock.idempotency;

import java.time.Duration;
import java.util.Optional;

/**
 * The answer of {@link DedupRecords#runOnce}: the action ran now ({@link Executed}), had run before
 * and its stored result is returned ({@link Replayed}), or is running elsewhere right now ({@link
 * InProgress}).
 *
 * @param <T> the action's result
 */
public sealed interface RunOnceResult<T> {

  /** The result, for {@link Executed} and {@link Replayed}; empty for {@link InProgress}. */
  Optional<T> value();

  /** The action ran in this call. */
  record Executed<T>(T result) implements RunOnceResult<T> {
    @Override
    public Optional<T> value() {
      return Optional.of(result);
    }
  }

  /** The action ran before; this is the result it stored. */
  record Replayed<T>(T result) implements RunOnceResult<T> {
    @Override
    public Optional<T> value() {
      return Optional.of(result);
    }
  }

  /**
   * Another caller is running the action; ask again after {@code retryAfter}. If that caller
   * crashed, its claim expires by then and the next call runs the action.
   */
  record InProgress<T>(Duration retryAfter) implements RunOnceResult<T> {
    @Override
    public Optional<T> value() {
      return Optional.empty();
    }
  }
}
