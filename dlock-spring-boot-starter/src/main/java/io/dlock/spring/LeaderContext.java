package io.dlock.spring;

import io.dlock.LeaderTerm;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The term under which the innermost {@link LeaderOnly} method running on the calling thread was
 * let through. Bound while the method body runs.
 *
 * <pre>{@code
 * store.write(item, LeaderContext.currentEpoch());
 * }</pre>
 */
public final class LeaderContext {
  private static final ThreadLocal<Deque<LeaderTerm>> TERMS =
      ThreadLocal.withInitial(ArrayDeque::new);

  private LeaderContext() {}

  /**
   * The term of the innermost {@link LeaderOnly} method running on this thread, if any. Its {@code
   * lease().isValid()} says whether it still stands.
   */
  public static Optional<LeaderTerm> currentTerm() {
    return Optional.ofNullable(TERMS.get().peek());
  }

  /**
   * The epoch (fencing token) of the term of the innermost {@link LeaderOnly} method running on
   * this thread.
   *
   * @throws IllegalStateException if no {@link LeaderOnly} method is running on this thread
   */
  public static long currentEpoch() {
    LeaderTerm term = TERMS.get().peek();
    if (term == null) {
      throw new IllegalStateException(
          "no @LeaderOnly method is running on thread " + Thread.currentThread().getName());
    }
    return term.epoch();
  }

  static void push(LeaderTerm term) {
    TERMS.get().push(term);
  }

  static void pop() {
    Deque<LeaderTerm> terms = TERMS.get();
    terms.pop();
    if (terms.isEmpty()) {
      TERMS.remove();
    }
  }
}
