package io.dlock.idempotency.update;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * An optimistic update: read a value with its row's version, compute the new value, and write it
 * with {@code UPDATE ... SET ..., version = version + 1 WHERE id = ? AND version = ?}. If another
 * writer changed the row in between, the write changes nothing, and the round is repeated on the
 * fresh value, up to the policy's tries, with jittered backoff in between.
 *
 * <pre>{@code
 * VersionCheckedResult<Long> r = VersionCheckedUpdate.run(dataSource, RetryPolicy.of(20, ms(1), ms(50)),
 *     c -> readStock(c, sku),                                       // Versioned(n, version) or null
 *     n -> n >= qty ? Optional.of(n - qty) : Optional.empty(),     // the rule
 *     (c, n, version) -> ConditionalUpdate.run(c,
 *         "UPDATE stock SET n = ?, version = version + 1 WHERE id = ? AND version = ?", n, sku, version));
 * }</pre>
 *
 * <p>Guarantee: a value is written only over the version it was computed from. Each read and write
 * run on a connection in auto-commit; SQL errors throw {@link UpdateFailedException}.
 */
public final class VersionCheckedUpdate {
  private VersionCheckedUpdate() {}

  /** Reads the current value and version of the row, or null if it does not exist. */
  @FunctionalInterface
  public interface Read<T> {
    @Nullable Versioned<T> read(Connection connection) throws SQLException;
  }

  /**
   * Writes {@code value} only if the row still has {@code expectedVersion}; says whether it did.
   */
  @FunctionalInterface
  public interface Write<T> {
    boolean write(Connection connection, T value, long expectedVersion) throws SQLException;
  }

  /**
   * Runs read, change and write rounds until a write applies, the change declines, or the tries run
   * out.
   *
   * @param change the new value for the current one, or empty to give up ({@link
   *     VersionCheckedResult.Status#REJECTED})
   */
  public static <T> VersionCheckedResult<T> run(
      DataSource dataSource,
      RetryPolicy retry,
      Read<T> read,
      Function<T, Optional<T>> change,
      Write<T> write) {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(retry, "retry");
    Objects.requireNonNull(read, "read");
    Objects.requireNonNull(change, "change");
    Objects.requireNonNull(write, "write");
    T last = null;
    for (int attempt = 1; ; attempt++) {
      try (Connection c = dataSource.getConnection()) {
        if (!c.getAutoCommit()) {
          c.setAutoCommit(true);
        }
        Versioned<T> current = read.read(c);
        if (current == null) {
          return new VersionCheckedResult<>(VersionCheckedResult.Status.MISSING, null, attempt);
        }
        last = current.value();
        Optional<T> next = change.apply(current.value());
        if (next.isEmpty()) {
          return new VersionCheckedResult<>(VersionCheckedResult.Status.REJECTED, last, attempt);
        }
        if (write.write(c, next.get(), current.version())) {
          return new VersionCheckedResult<>(
              VersionCheckedResult.Status.APPLIED, next.get(), attempt);
        }
      } catch (SQLException e) {
        if (!ConditionalUpdate.isTransientConflict(e) || attempt >= retry.maxAttempts()) {
          throw new UpdateFailedException(
              "Version-checked update failed: "
                  + e.getMessage()
                  + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]"),
              e);
        }
      }
      if (attempt >= retry.maxAttempts()) {
        return new VersionCheckedResult<>(VersionCheckedResult.Status.CONFLICT, last, attempt);
      }
      retry.backOff(attempt);
    }
  }
}
