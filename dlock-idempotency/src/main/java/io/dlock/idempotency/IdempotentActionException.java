package io.dlock.idempotency;

/**
 * An action run by {@link DedupRecords#runOnce} threw a checked exception; it is the cause. The
 * record was marked failed, so the next call with the same key runs the action again. Unchecked
 * exceptions and errors of the action are rethrown as they are.
 */
public class IdempotentActionException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public IdempotentActionException(String message, Throwable cause) {
    super(message, cause);
  }
}
