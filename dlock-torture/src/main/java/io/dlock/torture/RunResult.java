package io.dlock.torture;

import java.time.Duration;
import java.util.List;

/** What one run measured, and which pass criteria it failed (none, to pass). */
record RunResult(
    String backend,
    Scenario scenario,
    Duration duration,
    int grants,
    int noGrants,
    int faults,
    int overlaps,
    int overlapsExplainedByPause,
    int staleWritesAccepted,
    int fencedRejections,
    int lostUpdatesUnfenced,
    int tokenViolations,
    int nextGrantSamples,
    long medianNextGrantNanos,
    long worstNextGrantNanos,
    Duration nextGrantBound,
    int toldSamples,
    long worstToldNanos,
    Duration toldBound,
    int losses,
    int spuriousLosses,
    int releasesNotDone,
    long worstFreeWhileWaitedNanos,
    List<String> failures,
    Ledger ledger,
    Workload workload,
    String serverClock) {

  /**
   * This result with what the server's clock did meanwhile ({@link ServerClockSampler#stop}): a
   * step there explains a lease ended early, which no criterion should blame on dlock unseen.
   */
  RunResult withServerClock(String summary) {
    return new RunResult(
        backend,
        scenario,
        duration,
        grants,
        noGrants,
        faults,
        overlaps,
        overlapsExplainedByPause,
        staleWritesAccepted,
        fencedRejections,
        lostUpdatesUnfenced,
        tokenViolations,
        nextGrantSamples,
        medianNextGrantNanos,
        worstNextGrantNanos,
        nextGrantBound,
        toldSamples,
        worstToldNanos,
        toldBound,
        losses,
        spuriousLosses,
        releasesNotDone,
        worstFreeWhileWaitedNanos,
        failures,
        ledger,
        workload,
        summary);
  }

  /** A run of the lock workload: no ledger. */
  RunResult(
      String backend,
      Scenario scenario,
      Duration duration,
      int grants,
      int noGrants,
      int faults,
      int overlaps,
      int overlapsExplainedByPause,
      int staleWritesAccepted,
      int fencedRejections,
      int lostUpdatesUnfenced,
      int tokenViolations,
      int nextGrantSamples,
      long medianNextGrantNanos,
      long worstNextGrantNanos,
      Duration nextGrantBound,
      int toldSamples,
      long worstToldNanos,
      Duration toldBound,
      int losses,
      int spuriousLosses,
      int releasesNotDone,
      long worstFreeWhileWaitedNanos,
      List<String> failures) {
    this(
        backend,
        scenario,
        duration,
        grants,
        noGrants,
        faults,
        overlaps,
        overlapsExplainedByPause,
        staleWritesAccepted,
        fencedRejections,
        lostUpdatesUnfenced,
        tokenViolations,
        nextGrantSamples,
        medianNextGrantNanos,
        worstNextGrantNanos,
        nextGrantBound,
        toldSamples,
        worstToldNanos,
        toldBound,
        losses,
        spuriousLosses,
        releasesNotDone,
        worstFreeWhileWaitedNanos,
        failures,
        null,
        Workload.LOCK,
        "");
  }

  /** An idempotency run: a ledger instead of holds. */
  static RunResult ofLedger(
      String target, Scenario scenario, Duration duration, Ledger ledger, List<String> failures) {
    return new RunResult(
        target,
        scenario,
        duration,
        ledger.requests(),
        0,
        ledger.repliesDropped(),
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        -1,
        -1,
        Duration.ZERO,
        0,
        -1,
        Duration.ZERO,
        0,
        0,
        0,
        0,
        failures,
        ledger,
        Workload.LOCK, // not a lock run: the workload option does not apply to a ledger
        "");
  }

  boolean passed() {
    return failures.isEmpty();
  }

  /**
   * The target as the report names it: its name, and the workload when it is not the lock one
   * ({@code redis (election)}: the grants are then terms, the tokens epochs).
   */
  String label() {
    return workload == Workload.LOCK ? backend : backend + " (" + workload.id() + ")";
  }

  static String tableHeader() {
    return "| backend | scenario | s | grants | faults | overlaps (by pause) | stale accepted"
        + " | fenced rejects | lost updates (unfenced) | token errors | fault to next grant:"
        + " median / worst (bound) ms | told of loss: worst (bound) ms | losses (spurious)"
        + " | releases reported not done | free lock while waited: worst ms | verdict |\n"
        + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  }

  String tableRow() {
    if (ledger != null) {
      return "| "
          + backend
          + " | "
          + scenario.id()
          + " | "
          + duration.toSeconds()
          + " | "
          + ledger.requests()
          + " | "
          + ledger.repliesDropped()
          + " | "
          + ledger.retries()
          + " | "
          + ledger.appliedOnce()
          + " | "
          + ledger.appliedTwice()
          + " | "
          + ledger.toldByOwnEarlierAttempt()
          + " | "
          + ledger.neverApplied()
          + " | "
          + ledger.unresolved()
          + " | "
          + ledger.wrongResults()
          + " | "
          + (passed() ? "pass" : "**FAIL**: " + String.join("; ", failures))
          + " |";
    }
    return "| "
        + label()
        + " | "
        + scenario.id()
        + " | "
        + duration.toSeconds()
        + " | "
        + grants
        + " | "
        + faults
        + " | "
        + overlaps
        + " ("
        + overlapsExplainedByPause
        + ") | "
        + staleWritesAccepted
        + " | "
        + fencedRejections
        + " | "
        + lostUpdatesUnfenced
        + " | "
        + tokenViolations
        + " | "
        + (nextGrantSamples == 0
            ? "-"
            : Checker.millis(medianNextGrantNanos)
                + " / "
                + Checker.millis(worstNextGrantNanos)
                + " ("
                + nextGrantBound.toMillis()
                + ")")
        + " | "
        + (toldSamples == 0
            ? "-"
            : Checker.millis(worstToldNanos) + " (" + toldBound.toMillis() + ")")
        + " | "
        + losses
        + " ("
        + spuriousLosses
        + ") | "
        + releasesNotDone
        + " | "
        + Checker.millis(worstFreeWhileWaitedNanos)
        + " | "
        + (passed() ? "pass" : "**FAIL**: " + String.join("; ", failures))
        + " |";
  }
}
