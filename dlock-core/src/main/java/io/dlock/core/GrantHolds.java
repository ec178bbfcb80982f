package io.dlock.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The open holds ({@link LeaseHandle}s) that share one grant: one per acquisition, more than one
 * once the holder re-entered.
 *
 * <p>A superclass of {@link Grant}, not a field of it, for the reason {@link LeaseTerm} is: a
 * client may hold many thousands of grants, and a second object each would cost its header. The
 * holds change under the grant's monitor: the methods that do not take it themselves are called
 * with it held.
 */
abstract class GrantHolds extends GrantValidity {
  /**
   * The open holds: null, one {@link LeaseHandle}, or an {@link ArrayDeque} of them once the holder
   * re-entered. Most grants are held once, and a client may hold many thousands of them, so the
   * common case allocates nothing extra.
   */
  private @Nullable Object openHandles;

  @Nullable LeaseHandle lastOpenHandle() {
    synchronized (this) {
      return lastHandle();
    }
  }

  int holdCount() {
    synchronized (this) {
      return handleCount();
    }
  }

  // ---- callers hold this grant's monitor -------------------------------------------------------

  @SuppressWarnings("unchecked")
  final void addHandle(LeaseHandle handle) {
    Object current = openHandles;
    if (current == null) {
      openHandles = handle;
    } else if (current instanceof LeaseHandle single) {
      ArrayDeque<LeaseHandle> many = new ArrayDeque<>(4);
      many.addLast(single);
      many.addLast(handle);
      openHandles = many;
    } else {
      ((ArrayDeque<LeaseHandle>) current).addLast(handle);
    }
  }

  @SuppressWarnings("unchecked")
  final void removeHandle(LeaseHandle handle) {
    Object current = openHandles;
    if (current == handle) {
      openHandles = null;
    } else if (current instanceof ArrayDeque<?> many) {
      ((ArrayDeque<LeaseHandle>) many).remove(handle);
    }
  }

  private @Nullable LeaseHandle lastHandle() {
    Object current = openHandles;
    if (current instanceof LeaseHandle single) {
      return single;
    }
    return current instanceof ArrayDeque<?> many ? (LeaseHandle) many.peekLast() : null;
  }

  final int handleCount() {
    Object current = openHandles;
    if (current == null) {
      return 0;
    }
    return current instanceof ArrayDeque<?> many ? many.size() : 1;
  }

  /** The open holds, newest first. */
  final List<LeaseHandle> handlesNewestFirst() {
    Object current = openHandles;
    if (current == null) {
      return List.of();
    }
    if (current instanceof LeaseHandle single) {
      return List.of(single);
    }
    @SuppressWarnings("unchecked")
    ArrayDeque<LeaseHandle> many = (ArrayDeque<LeaseHandle>) current;
    List<LeaseHandle> newestFirst = new ArrayList<>(many.size());
    many.descendingIterator().forEachRemaining(newestFirst::add);
    return newestFirst;
  }
}
