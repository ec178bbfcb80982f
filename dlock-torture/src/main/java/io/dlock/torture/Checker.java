package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a run's merged history and measures what the safety claims promise: the {@link RunHistory}
 * read once, each promise judged by its {@link Criterion}, and the verdict (every criterion's
 * failures, in the report's order, and the run's own checks) written into a {@link RunResult}. An
 * election run is judged by the same criteria, its terms taken as holds of its lock, and by {@link
 * ElectionNoticeCriterion}. Holds are taken conservatively (see {@link Hold}), so an overlap found
 * is an overlap that happened.
 */
final class Checker {
  private final RunSettings settings;
  private final Duration nextGrantBound;
  private final List<Event> history;

  Checker(RunSettings settings, Duration nextGrantBound, List<Event> history) {
    this.settings = settings;
    this.nextGrantBound = nextGrantBound;
    this.history = history;
  }

  RunResult check(String backend, int faultsInjected) {
    Scenario scenario = settings.scenario();
    RunHistory run = new RunHistory(settings, history);
    OverlapCriterion overlap = new OverlapCriterion(run);
    StuckLockCriterion stuckLock = new StuckLockCriterion(run, nextGrantBound);
    FencingCriterion fencing = new FencingCriterion(settings, run);
    NextGrantCriterion nextGrant = new NextGrantCriterion(scenario, run, nextGrantBound);
    ToldOfLossCriterion toldOfLoss = new ToldOfLossCriterion(settings, run);
    SpuriousLossCriterion spuriousLoss = new SpuriousLossCriterion(settings, run);
    AsyncCancelCriterion asyncCancel = new AsyncCancelCriterion(settings, run, nextGrantBound);
    ClientCloseCriterion clientClose = new ClientCloseCriterion(run, nextGrantBound);
    List<Criterion> criteria =
        new ArrayList<>(
            List.of(
                overlap,
                stuckLock,
                fencing,
                nextGrant,
                toldOfLoss,
                spuriousLoss,
                asyncCancel,
                clientClose));
    Workload workload = settings.workload();
    if (workload == Workload.ELECTION) {
      // A term has no release to answer: its end is a notice, which this criterion checks.
      criteria.add(new ElectionNoticeCriterion(run));
    }
    List<String> failures = new ArrayList<>();
    for (Criterion criterion : criteria) {
      failures.addAll(criterion.failures());
    }

    // Nothing is lost: every release a live worker began was answered, done or reported not done.
    long unanswered =
        run.holds.stream()
            .filter(h -> h.releasedAt == Long.MAX_VALUE && !run.killed.contains(h.source))
            .count();
    if (unanswered > 0 && workload == Workload.LOCK) {
      failures.add(unanswered + " release(s) by live workers never answered");
    }
    // A run that granted next to nothing, or injected no fault, proves nothing of the above.
    int grants = run.holds.size();
    if (grants < 3) {
      failures.add(
          "only "
              + grants
              + " "
              + (workload == Workload.ELECTION ? "term" : "grant")
              + "(s): the run proved nothing");
    }
    if (faultsInjected == 0 && scenario != Scenario.CALM && scenario != Scenario.CLOCK_OFFSET) {
      failures.add("no fault was injected");
    }

    return new RunResult(
        backend,
        scenario,
        run.duration(),
        grants,
        run.noGrants(),
        faultsInjected,
        overlap.overlaps,
        overlap.explainedByPause,
        run.staleAccepted(),
        run.fencedRejections(),
        run.lostUpdates(),
        fencing.tokenViolations,
        nextGrant.samples(),
        nextGrant.median(),
        nextGrant.worst,
        nextGrantBound,
        toldOfLoss.samples(),
        toldOfLoss.worst(),
        toldOfLoss.bound(),
        spuriousLoss.losses,
        spuriousLoss.spurious,
        run.releaseErrors(),
        stuckLock.worstFreeWhileWaited,
        failures,
        null,
        workload);
  }

  /** Nanoseconds as whole milliseconds, rounded, as every message and the report show them. */
  static long millis(long nanos) {
    return Math.round(nanos / 1e6);
  }
}
