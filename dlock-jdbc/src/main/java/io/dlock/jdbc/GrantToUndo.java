package io.dlock.jdbc;

import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * An acquisition failed after its grant was committed, and the undo on its own connection failed
 * too (the connection died): the caller runs {@link #undo} on another connection, or the grant
 * blocks the name until its lease ends with nobody holding it. The cause is the acquisition's
 * failure, which the caller reports whatever the undo does.
 */
final class GrantToUndo extends SQLException {
  private static final long serialVersionUID = 1L;

  /** The undo: takes back exactly the committed grant (or its hold), and nothing newer. */
  @FunctionalInterface
  interface Undo {
    void run(java.sql.Connection c) throws SQLException;
  }

  private final transient Undo undo;

  GrantToUndo(SQLException cause, Undo undo) {
    super(cause.getMessage(), cause.getSQLState(), cause.getErrorCode(), cause);
    this.undo = undo;
  }

  Undo undo() {
    return undo;
  }

  /**
   * After an acquisition of {@code name} failed: if a {@link GrantToUndo} is among the failure's
   * causes, runs its undo on another connection, then fails as the acquisition did. Without this
   * the grant blocked the name for its whole lease (found by review: MySQL's token written after
   * the commit).
   */
  static <T> CompletableFuture<T> undoElsewhere(JdbcCalls calls, String name, Throwable failure) {
    GrantToUndo toUndo = null;
    for (Throwable t = failure; t != null && toUndo == null; t = t.getCause()) {
      if (t instanceof GrantToUndo g) {
        toUndo = g;
      }
    }
    if (toUndo == null) {
      return CompletableFuture.failedFuture(failure);
    }
    Undo undo = toUndo.undo();
    return calls
        .call(
            "undo the grant of '" + name + "'",
            c -> {
              undo.run(c);
              return null;
            })
        .<T>handle(
            (done, undoFailure) -> {
              if (undoFailure != null) {
                failure.addSuppressed(undoFailure);
              }
              throw failure instanceof CompletionException ce
                  ? ce
                  : new CompletionException(failure);
            });
  }
}
