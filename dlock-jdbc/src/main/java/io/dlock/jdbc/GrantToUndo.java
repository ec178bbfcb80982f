package io.dlock.jdbc;

import java.sql.SQLException;

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
}
