package io.dlock.torture;

import java.util.List;

/**
 * No two holders of one lock at once (in an election, no two leaders: terms are its lock's holds).
 * Holds of one grant (shared by an owner id) are one holder. An overlap with a holder that was
 * paused past its lease, or whose grant was deleted behind its back, is what that fault is known to
 * cause: it is counted, as explained, and fails nothing.
 */
final class OverlapCriterion implements Criterion {
  final int overlaps;
  final int explainedByPause;
  private final String firstOverlap;
  private final Workload workload;

  OverlapCriterion(RunHistory run) {
    this.workload = run.workload;
    int overlaps = 0;
    int explained = 0;
    String first = null;
    for (List<Hold> list : run.byLock.values()) {
      for (int i = 0; i < list.size(); i++) {
        Hold a = list.get(i);
        for (int j = i + 1; j < list.size() && list.get(j).start < a.end; j++) {
          Hold b = list.get(j);
          if (a.grant().equals(b.grant())) {
            continue;
          }
          if (a.paused || b.paused) {
            explained++;
          } else {
            overlaps++;
            if (first == null) {
              first = describe(a, run) + " and " + describe(b, run);
            }
          }
        }
      }
    }
    this.overlaps = overlaps;
    this.explainedByPause = explained;
    this.firstOverlap = first;
  }

  @Override
  public List<String> failures() {
    if (overlaps > 0) {
      return List.of(
          overlaps
              + " overlapping "
              + workload.hold()
              + "(s) not explained by a pause past the lease (first: "
              + firstOverlap
              + ")");
    }
    return List.of();
  }

  /** A hold for a failure message: who, which token, when (ms into the run). */
  private static String describe(Hold h, RunHistory run) {
    long origin = run.origin();
    return h.source
        + (h.owner == null ? "" : " (owner " + h.owner + ")")
        + " "
        + run.workload.token()
        + " "
        + h.token
        + " on "
        + h.lock
        + " from "
        + Checker.millis(h.start - origin)
        + " to "
        + Checker.millis(h.end - origin)
        + " ms";
  }
}
