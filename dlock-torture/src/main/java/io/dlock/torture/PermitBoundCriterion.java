package io.dlock.torture;

import java.util.List;

/**
 * Criterion 1 of a semaphore run: never more permits held than the bound, at any instant. Each
 * grant's start is such an instant (the count only grows there): the permits of every hold live
 * then are summed, conservatively taken (see {@link PermitOccupancy}), so an excess found is an
 * excess that happened. As with overlapping lock holds, an excess that only a holder paused past
 * its lease (or whose grant was deleted behind its back) makes is what that fault is known to
 * cause: counted as explained, and failing nothing.
 */
final class PermitBoundCriterion implements Criterion {
  final int excesses;
  final int explainedByPause;
  private final String first;
  private final int bound;

  PermitBoundCriterion(RunHistory run, int bound) {
    this.bound = bound;
    int excesses = 0;
    int explained = 0;
    String first = null;
    for (List<Hold> list : run.byLock.values()) {
      for (Hold b : list) {
        int held = 0;
        int heldUnpaused = 0;
        StringBuilder who = new StringBuilder();
        for (Hold h : list) {
          if (h.start > b.start) {
            break;
          }
          if (h.contains(b.start)) {
            held += h.count;
            heldUnpaused += h.paused ? 0 : h.count;
            who.append(who.isEmpty() ? "" : ", ")
                .append(h.source)
                .append(" token ")
                .append(h.token)
                .append(" (")
                .append(h.count)
                .append(')');
          }
        }
        if (heldUnpaused > bound) {
          excesses++;
          if (first == null) {
            first =
                held
                    + " held at "
                    + Checker.millis(b.start - run.origin())
                    + " ms on "
                    + b.lock
                    + ": "
                    + who;
          }
        } else if (held > bound) {
          explained++;
        }
      }
    }
    this.excesses = excesses;
    this.explainedByPause = explained;
    this.first = first;
  }

  @Override
  public List<String> failures() {
    if (excesses > 0) {
      return List.of(
          excesses
              + " grant(s) took the permits held above the bound of "
              + bound
              + ", not explained by a pause past the lease (first: "
              + first
              + ")");
    }
    return List.of();
  }
}
