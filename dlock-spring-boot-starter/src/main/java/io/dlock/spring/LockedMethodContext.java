package io.dlock.spring;

import io.dlock.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the innermost {@link Locked} method running on the calling thread. Bound while the
 * method body runs (not while a transaction that outlives it commits).
 *
 * <pre>{@code
 * store.write(item, LockedMethodContext.currentFencingToken());
 * }</pre>
 */
public final class LockedMethodContext {
  private static final ThreadLocal<Deque<Lease>> LEASES = ThreadLocal.withInitial(ArrayDeque::new);

  private LockedMethodContext() {}

  /** The lease of the innermost {@link Locked} method running on this thread, if any. */
  public static Optional<Lease> currentLease() {
    return Optional.ofNullable(LEASES.get().peek());
  }

  /**
   * The fencing token of the innermost {@link Locked} method running on this thread.
   *
   * @throws IllegalStateException if no {@link Locked} method is running on this thread
   */
  public static long currentFencingToken() {
    Lease lease = LEASES.get().peek();
    if (lease == null) {
      throw new IllegalStateException(
          "no @Locked method is running on thread " + Thread.currentThread().getName());
    }
    return lease.fencingToken();
  }

  static void push(Lease lease) {
    LEASES.get().push(lease);
  }

  static void pop() {
    Deque<Lease> leases = LEASES.get();
    leases.pop();
    if (leases.isEmpty()) {
      LEASES.remove();
    }
  }
}
