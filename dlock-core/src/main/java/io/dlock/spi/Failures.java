package io.dlock.spi;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What backends need to say about a failure, written once. */
public final class Failures {
  private Failures() {}

  /**
   * The failure that a future's wrappers ({@link CompletionException}, {@link ExecutionException})
   * carry, or {@code failure} itself when it is not wrapped.
   */
  public static Throwable unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The last cause in {@code failure}'s chain (a socket's refusal under a driver's wrapping). */
  public static Throwable rootCause(Throwable failure) {
    Throwable t = failure;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  /**
   * {@code failure}'s message followed by its root cause's in parentheses, for messages: "Unable to
   * connect (Connection refused)"; only the message when the failure is its own root.
   */
  public static String describe(Throwable failure) {
    Throwable root = rootCause(failure);
    return root == failure
        ? String.valueOf(failure.getMessage())
        : failure.getMessage() + " (" + root.getMessage() + ")";
  }
}
