package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a run's merged history and measures what the safety claims promise: the {@link RunHistory}
 * read once, each promise judged by its {@link Criterion}, and the verdict (every criterion's
 * failures, in the report's order, and the run's own checks) written into a {@link RunResult}. An
 * election run is judged by the same criteria, its terms taken as holds of its lock, and by {@link
 * ElectionNoticeCriterion}. A semaphore run is judged by the lock criteria that hold for permits
 * too, and by four of its own in place of the ones that assume one holder at a time: {@link
 * PermitBoundCriterion} (never above the bound) for the overlap, {@link PermitFenceCriterion} (no
 * write through an ended permit accepted), {@link PermitReturnCriterion} (a faulted holder's
 * permits back in time) for the next grant, {@link PermitLossCriterion} (every loss told once).
 * Holds are taken conservatively (see {@link Hold}), so an overlap found is an overlap that
 * happened.
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
    Workload workload = settings.workload();
    if (workload == Workload.SEMAPHORE) {
      return checkPermits(run, backend, faultsInjected);
    }
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
    if (workload == Workload.ELECTION) {
      // A term has no release to answer: its end is a notice, which this criterion checks.
      criteria.add(new ElectionNoticeCriterion(run));
    }
    List<String> failures = verdict(run, criteria, faultsInjected);
    return new RunResult(
        backend,
        scenario,
        run.duration(),
        run.holds.size(),
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
        workload,
        "");
  }

  /**
   * A semaphore run: the lock criteria that hold for permits as they are (tokens in order, no
   * permits free while waited for, holders told, no spurious loss), and the semaphore's own in
   * place of those that assume one holder at a time. The report's overlap column counts grants
   * above the bound, its stale column writes through ended permits, its next-grant columns permits
   * back.
   */
  private RunResult checkPermits(RunHistory run, String backend, int faultsInjected) {
    Scenario scenario = settings.scenario();
    int bound = settings.permits();
    PermitBoundCriterion aboveBound = new PermitBoundCriterion(run, bound);
    StuckLockCriterion stuckLock = new StuckLockCriterion(run, nextGrantBound);
    FencingCriterion fencing = new FencingCriterion(settings, run);
    PermitFenceCriterion permitFence = new PermitFenceCriterion(run, bound);
    PermitReturnCriterion permitBack =
        new PermitReturnCriterion(scenario, run, bound, nextGrantBound);
    ToldOfLossCriterion toldOfLoss = new ToldOfLossCriterion(settings, run);
    PermitLossCriterion permitLoss = new PermitLossCriterion(run, bound);
    SpuriousLossCriterion spuriousLoss = new SpuriousLossCriterion(settings, run);
    List<String> failures =
        verdict(
            run,
            List.of(
                aboveBound,
                stuckLock,
                fencing,
                permitFence,
                permitBack,
                toldOfLoss,
                permitLoss,
                spuriousLoss),
            faultsInjected);
    return new RunResult(
        backend,
        scenario,
        run.duration(),
        run.holds.size(),
        run.noGrants(),
        faultsInjected,
        aboveBound.excesses,
        aboveBound.explainedByPause,
        permitFence.stale,
        run.fencedRejections(),
        run.lostUpdates(),
        fencing.tokenViolations,
        permitBack.samples(),
        permitBack.median(),
        permitBack.worst,
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
        Workload.SEMAPHORE,
        "");
  }

  /** Every criterion's failures, in order, and the run's own checks. */
  private List<String> verdict(RunHistory run, List<Criterion> criteria, int faultsInjected) {
    Workload workload = settings.workload();
    Scenario scenario = settings.scenario();
    List<String> failures = new ArrayList<>();
    for (Criterion criterion : criteria) {
      failures.addAll(criterion.failures());
    }

    // Nothing is lost: every release a live worker began was answered, done or reported not done.
    long unanswered =
        run.holds.stream()
            .filter(h -> h.releasedAt == Long.MAX_VALUE && !run.killed.contains(h.source))
            .count();
    if (unanswered > 0 && workload != Workload.ELECTION) {
      failures.add(unanswered + " release(s) by live workers never answered");
    }
    // A run that granted next to nothing, or injected no fault, proves nothing of the above.
    int grants = run.holds.size();
    if (grants < 3) {
      failures.add(
          "only "
              + grants
              + " "
              + (workload == Workload.LOCK ? "grant" : workload.hold())
              + "(s): the run proved nothing");
    }
    if (faultsInjected == 0 && scenario != Scenario.CALM && scenario != Scenario.CLOCK_OFFSET) {
      failures.add("no fault was injected");
    }
    return failures;
  }

  /** Nanoseconds as whole milliseconds, rounded, as every message and the report show them. */
  static long millis(long nanos) {
    return Math.round(nanos / 1e6);
  }
}
