package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Liveness while waited for: a lock free by every holder's account while someone waits for it. Only
 * a holder the server still counts (one killed, stopped, cut off or releasing) explains that, and
 * only until the next-grant bound; longer means a stuck lock (an orphaned queue node, a lost
 * wake-up). Gaps overlapping a backend restart are left out, and so are gaps a client's close began
 * ({@link ClientCloseCriterion} judges those). In an election run: no leader while candidates
 * compete (a candidate waits from joining, or from an involuntary revocation, to its election).
 */
final class StuckLockCriterion implements Criterion {
  final long worstFreeWhileWaited;
  private final String stuck;
  private final Duration nextGrantBound;
  private final Workload workload;

  StuckLockCriterion(RunHistory run, Duration nextGrantBound) {
    this.workload = run.workload;
    this.nextGrantBound = nextGrantBound;
    long worst = 0;
    String stuck = null;
    for (Map.Entry<String, List<Hold>> lockHolds : run.byLock.entrySet()) {
      for (long[] gap : run.freeGaps(lockHolds.getKey())) {
        if (run.begunByAClose(lockHolds.getKey(), gap)) {
          continue;
        }
        for (RunHistory.Wait w : run.waits) {
          if (!w.lock().equals(lockHolds.getKey()) || w.start() > gap[0]) {
            continue;
          }
          // A waiter cut off cannot be granted meanwhile, nor anyone during a backend restart
          // (and the two leases after it): only the time outside those counts, so a gap that
          // outlasts a restart by more than the bound still fails.
          List<long[]> excused = new ArrayList<>(run.restartWindows);
          excused.addAll(run.waiterCuts.getOrDefault(w.source(), List.of()));
          long freeWhileWaited = longestOutside(gap[0], Math.min(gap[1], w.end()), excused);
          if (freeWhileWaited > worst) {
            worst = freeWhileWaited;
            stuck = lockHolds.getKey();
          }
        }
      }
    }
    this.worstFreeWhileWaited = worst;
    this.stuck = stuck;
  }

  @Override
  public List<String> failures() {
    if (worstFreeWhileWaited > nextGrantBound.toNanos()) {
      if (workload == Workload.ELECTION) {
        return List.of(
            "election "
                + stuck
                + " had no leader for "
                + Checker.millis(worstFreeWhileWaited)
                + " ms while candidates competed, over the bound of "
                + nextGrantBound.toMillis()
                + " ms");
      }
      return List.of(
          stuck
              + " was free for "
              + Checker.millis(worstFreeWhileWaited)
              + " ms while a worker waited for it, over the bound of "
              + nextGrantBound.toMillis()
              + " ms");
    }
    return List.of();
  }

  /** The longest piece of [from, to] outside the given windows. */
  static long longestOutside(long from, long to, List<long[]> windows) {
    long longest = 0;
    long pieceStart = from;
    List<long[]> sorted = new ArrayList<>(windows);
    sorted.sort(Comparator.comparingLong(w -> w[0]));
    for (long[] w : sorted) {
      if (w[1] < pieceStart || w[0] > to) {
        continue;
      }
      longest = Math.max(longest, Math.min(w[0], to) - pieceStart);
      pieceStart = Math.max(pieceStart, w[1]);
    }
    return Math.max(longest, to - pieceStart);
  }
}
