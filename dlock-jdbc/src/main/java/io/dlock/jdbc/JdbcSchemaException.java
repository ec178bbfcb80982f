package io.dlock.jdbc;

/**
 * The database answered, but the lock table (a table beside it, its sequence or counter rows, or
 * the user's rights on them) is not what dlock needs. The message says which and how to fix it;
 * {@link #fixedByCreatingTheSchema()} says whether the create-schema setting would, so that a
 * caller can name that setting in its own terms (the starter its property, the CLI its key).
 */
public final class JdbcSchemaException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final boolean fixedByCreatingTheSchema;

  JdbcSchemaException(String message, Throwable cause, boolean fixedByCreatingTheSchema) {
    super(message, cause);
    this.fixedByCreatingTheSchema = fixedByCreatingTheSchema;
  }

  /**
   * Whether starting with the create-schema setting on would fix it: the tables are missing (or
   * lack a column). Never for a table of the other MySQL-family dialect, nor when the setting was
   * on already.
   */
  public boolean fixedByCreatingTheSchema() {
    return fixedByCreatingTheSchema;
  }
}
