package io.dlock.torture;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Criterion 4 of a semaphore run: every loss of a permit told once, and a lost permit's late
 * release frees nothing. ({@link ToldOfLossCriterion} judges that a holder paused past its lease or
 * cut off is told at all, and how soon.) Each failure has the prefix {@code permit losses:}:
 *
 * <ul>
 *   <li>a grant told of its loss more than once (its listener called twice);
 *   <li>a loss told for a grant its worker never had (a number or token no hold of it carries);
 *   <li>a permit whose permits were provably back to others while its paused holder still thought
 *       it held them (see {@link PermitOccupancy}), released afterwards with the answer done: the
 *       release freed a grant that was no longer its own.
 * </ul>
 */
final class PermitLossCriterion implements Criterion {
  static final String PREFIX = "permit losses: ";

  private int toldTwice;
  private int toldForNothing;
  private int lateReleasesDone;
  private String first;

  PermitLossCriterion(RunHistory run, int bound) {
    Map<Hold, Integer> told = new HashMap<>();
    for (Event e : run.events) {
      if (e.kind() != Event.Kind.LOST) {
        continue;
      }
      String number = RunHistory.holdNumber(e.detail());
      Hold h =
          run.bySource.getOrDefault(e.source(), List.of()).stream()
              .filter(x -> x.token == e.token() && x.number.equals(number))
              .findFirst()
              .orElse(null);
      String at = e.source() + " token " + e.token() + " " + number;
      if (h == null) {
        toldForNothing++;
        first = first == null ? "told of a loss of a grant it never had: " + at : first;
      } else if (told.merge(h, 1, Integer::sum) == 2) {
        toldTwice++;
        first = first == null ? "told twice: " + at : first;
      }
    }
    for (List<Hold> holds : run.byLock.values()) {
      PermitOccupancy occupancy = new PermitOccupancy(holds, bound);
      for (Hold h : holds) {
        if (!h.paused || !"true".equals(h.releaseResult)) {
          continue;
        }
        long back = occupancy.provenBack(h, h.count, h.start, h.end);
        if (back != Long.MAX_VALUE) {
          lateReleasesDone++;
          first =
              first == null
                  ? h.source
                      + " token "
                      + h.token
                      + " released done "
                      + Checker.millis(h.releasedAt - back)
                      + " ms after its permits were back to others"
                  : first;
        }
      }
    }
  }

  @Override
  public List<String> failures() {
    List<String> failures = new ArrayList<>();
    if (toldTwice > 0) {
      failures.add(PREFIX + toldTwice + " grant(s) told of their loss more than once");
    }
    if (toldForNothing > 0) {
      failures.add(PREFIX + toldForNothing + " loss(es) told of a grant the worker never had");
    }
    if (lateReleasesDone > 0) {
      failures.add(
          PREFIX
              + lateReleasesDone
              + " late release(s) of a paused holder answered done after its permits were back");
    }
    if (!failures.isEmpty()) {
      failures.set(
          failures.size() - 1, failures.get(failures.size() - 1) + " (first: " + first + ")");
    }
    return failures;
  }
}
