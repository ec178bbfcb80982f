package io.dlock.torture;

import java.util.List;

/**
 * How many of a semaphore's permits the history shows held at an instant, and what that proves of
 * the server. A hold is taken conservatively (it starts after the server granted it and ends before
 * the server let it go, see {@link Hold}), so the permits the history shows held at {@code t} were
 * all held on the server at {@code t}. Then, as long as the server keeps its bound: if the permits
 * of the holds other than {@code h} live at {@code t}, with {@code h}'s, exceed the bound, the
 * server no longer counted {@code h} at {@code t}: its permits were back. The semaphore criteria
 * read a permit's end on the server this way, whatever ended it (expiry, a forced release).
 *
 * <p>Holds a pause past the lease or a forced release ended behind their holders' backs ({@link
 * Hold#paused}) are left out of the count: the history shows them held, the server may not.
 */
final class PermitOccupancy {
  private final List<Hold> holds;
  private final int bound;

  /**
   * @param holds the semaphore's holds, by start
   * @param bound the semaphore's bound
   */
  PermitOccupancy(List<Hold> holds, int bound) {
    this.holds = holds;
    this.bound = bound;
  }

  int bound() {
    return bound;
  }

  /**
   * The permits of the holds live at {@code t}, but {@code except}'s (which may be null) and those
   * of holds that may have ended behind their holders' backs.
   */
  int heldAt(long t, Hold except) {
    int held = 0;
    for (Hold h : holds) {
      if (h.start > t) {
        break;
      }
      if (h != except && !h.paused && h.contains(t)) {
        held += h.count;
      }
    }
    return held;
  }

  /**
   * The first instant in {@code (from, to]} at which the server provably no longer counted {@code
   * count} permits of {@code h} (a hold's start at which the others' permits and these exceed the
   * bound), or {@link Long#MAX_VALUE} if none is.
   */
  long provenBack(Hold h, int count, long from, long to) {
    for (Hold other : holds) {
      if (other.start > to) {
        break;
      }
      if (other != h && other.start > from && heldAt(other.start, h) + count > bound) {
        return other.start;
      }
    }
    return Long.MAX_VALUE;
  }
}
