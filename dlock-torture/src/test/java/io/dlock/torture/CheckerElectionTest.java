package io.dlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.torture.Event.Kind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checker on hand-written histories of the election workload ({@link CandidateWorker}): terms
 * are holds of the election's lock, so the lock criteria judge them, and {@link
 * ElectionNoticeCriterion} judges the notices. Each criterion passes a history that shows what
 * docs/election.md promises and fails one that breaks it (the negative controls). Lease 2 s,
 * renewal 666 ms, new-leader bound 3666 ms (the lease, a renewal interval and 1 s).
 */
class CheckerElectionTest {
  private static final long MS = 1_000_000L;
  private static final String E = "torture-e";
  private final List<Event> history = new ArrayList<>();
  private int terms;

  private void at(long ms, String source, Kind kind, String lock, long token, String detail) {
    history.add(new Event(ms * MS, source, kind, lock, token, detail));
  }

  /** A candidate elected at {@code fromMs}; returns the term's number. */
  private int elected(String candidate, long epoch, long fromMs) {
    int number = ++terms;
    at(fromMs, candidate, Kind.ELECTED, E, epoch, "#" + number);
    return number;
  }

  /** A round of the leader's work on both registers, accepted. */
  private void round(String candidate, long epoch, long atMs, long value) {
    at(atMs, "register", Kind.FREAD, E, epoch, candidate + " ok " + value);
    at(atMs + 1, "register", Kind.UWRITE, E, 0, candidate + " ok " + (value + 1));
    at(atMs + 1, "register", Kind.FWRITE, E, epoch, candidate + " ok " + (value + 1));
  }

  /** The leader resigns at {@code atMs}, told so, and competes again. */
  private void resigns(String candidate, long epoch, int number, long atMs) {
    at(atMs, candidate, Kind.RELEASING, E, epoch, "resigns");
    at(atMs + 1, candidate, Kind.REVOKED, E, epoch, "#" + number + " RESIGNED resigned");
    at(atMs + 2, candidate, Kind.ACQUIRING, E, 0, "joins again");
  }

  /** A clean term: elected, a round of work, resigned. */
  private void term(String candidate, long epoch, long fromMs, long toMs) {
    int number = elected(candidate, epoch, fromMs);
    round(candidate, epoch, fromMs + 10, epoch * 10);
    resigns(candidate, epoch, number, toMs);
  }

  /** w1 to w3 join at 0 ms and three terms change hands by resignation, from 100 ms to 400 ms. */
  private void handOffs() {
    for (String w : List.of("w1", "w2", "w3")) {
      at(0, w, Kind.ACQUIRING, E, 0, "joins");
    }
    term("w1", 1, 100, 200);
    term("w2", 2, 203, 300);
    term("w3", 3, 303, 400);
  }

  private RunResult check(Scenario scenario, int faults) {
    at(0, "faults", Kind.RUN_BEGIN, "-", 0, scenario.id());
    at(30_000, "faults", Kind.RUN_END, "-", 0, scenario.id());
    history.sort(Comparator.comparingLong(Event::nanos));
    RunSettings settings =
        new RunSettings(
            "test",
            scenario,
            Duration.ofSeconds(30),
            4,
            1,
            Duration.ofSeconds(2),
            Path.of("."),
            false,
            Workload.ELECTION);
    return new Checker(settings, Duration.ofMillis(3666), history).check("test", faults);
  }

  /** The candidates still competing at {@code atMs} leave: the run ends. */
  private void runEnds(long atMs, String... waiting) {
    for (String w : waiting) {
      at(atMs, w, Kind.NO_GRANT, E, 0, "interrupted: the run ends");
      at(atMs, w, Kind.RELEASING, E, 0, "the run ends: closes its candidacy");
    }
  }

  @Test
  void termsHandedOffByResignation_pass() {
    handOffs();
    int number = elected("w1", 4, 403);
    round("w1", 4, 410, 40);
    at(500, "w1", Kind.RELEASING, E, 4, "the run ends: closes its candidacy");
    at(501, "w1", Kind.REVOKED, E, 4, "#" + number + " RESIGNED the candidacy was closed");
    runEnds(500, "w2", "w3");
    RunResult result = check(Scenario.CALM, 0);
    assertThat(result.failures()).isEmpty();
    assertThat(result.grants()).isEqualTo(4);
    assertThat(result.label()).isEqualTo("test (election)");
  }

  @Test
  void aLeaderElectedWhileAnotherStillLeads_fails() {
    handOffs();
    elected("w1", 4, 500);
    elected("w2", 5, 600); // w1 was never told revoked
    RunResult result = check(Scenario.CALM, 0);
    assertThat(result.overlaps()).isEqualTo(1);
    assertThat(result.failures())
        .anyMatch(f -> f.startsWith("1 overlapping term(s)") && f.contains("w1 epoch 4"))
        .anyMatch(f -> f.contains("term(s) never told revoked"));
  }

  /**
   * w1 leads epoch 4 and is stopped as it works, for 4 s; w2 is elected (epoch 5) once w1's lease
   * ran out on the server. w1 resumes, its write is rejected by the fenced register, and it is told
   * EXPIRED at once.
   */
  private void pausedLeaderAndItsSuccessor() {
    handOffs();
    int number = elected("w1", 4, 500);
    at(510, "register", Kind.FREAD, E, 4, "w1 ok 30");
    at(515, "faults", Kind.STOP, E, 0, "w1");
    at(2_520, "w2", Kind.ELECTED, E, 5, "#" + ++terms);
    round("w2", 5, 2_530, 40);
    at(4_515, "faults", Kind.CONT, E, 0, "w1");
    at(4_520, "register", Kind.UWRITE, E, 0, "w1 lost-update 31");
    at(4_520, "register", Kind.FWRITE, E, 4, "w1 rejected 5");
    at(4_521, "w1", Kind.REVOKED, E, 4, "#" + number + " EXPIRED lease ran out");
    at(4_522, "w1", Kind.ACQUIRING, E, 0, "competes again");
    resigns("w2", 5, terms, 5_000);
    runEnds(5_100, "w1", "w2", "w3");
  }

  @Test
  void aLeaderPausedPastItsLease_overlapsItsSuccessorWithoutFailing_andItsWriteIsRejected() {
    pausedLeaderAndItsSuccessor();
    RunResult result = check(Scenario.PAUSE, 1);
    assertThat(result.failures()).isEmpty();
    assertThat(result.overlapsExplainedByPause()).isEqualTo(1);
    assertThat(result.fencedRejections()).isEqualTo(1);
    assertThat(result.worstNextGrantNanos()).isEqualTo(2_005 * MS);
    assertThat(result.worstToldNanos()).isEqualTo(6 * MS);
  }

  @Test
  void aStaleEpochWriteAccepted_fails() {
    pausedLeaderAndItsSuccessor();
    history.removeIf(e -> e.kind() == Kind.FWRITE && e.detail().startsWith("w1 rejected"));
    at(4_520, "register", Kind.FWRITE, E, 4, "w1 stale 31");
    RunResult result = check(Scenario.PAUSE, 1);
    assertThat(result.staleWritesAccepted()).isEqualTo(1);
    assertThat(result.failures()).anyMatch(f -> f.contains("stale write(s) accepted"));
  }

  @Test
  void anEpochNotGreaterThanAnEarlierTerms_fails() {
    handOffs();
    term("w1", 2, 500, 600); // epoch 2 again, after epoch 3's term
    RunResult result = check(Scenario.CALM, 0);
    assertThat(result.tokenViolations()).isPositive();
    assertThat(result.failures())
        .anyMatch(f -> f.contains("epoch(s) (fencing tokens) not strictly increasing"));
  }

  /** w1 leads epoch 4 and is killed at 1 s; w2 is elected after {@code successorMs}. */
  private void killedLeader(long successorMs) {
    handOffs();
    elected("w1", 4, 500);
    round("w1", 4, 990, 30);
    at(1_000, "faults", Kind.KILL, E, 0, "w1");
    term("w2", 5, successorMs, successorMs + 100);
    runEnds(successorMs + 200, "w2", "w3");
  }

  @Test
  void aNewLeaderWithinTheLeaseAndTolerance_afterTheLeaderIsKilled_passes() {
    killedLeader(3_100);
    RunResult result = check(Scenario.KILL, 1);
    assertThat(result.failures()).isEmpty();
    assertThat(result.worstNextGrantNanos()).isEqualTo(2_100 * MS);
  }

  /**
   * Every path delayed from 500 ms to 4.5 s, no leader from 400 ms to 4.8 s: within a delay beyond
   * the backend's per-call bound (token 1: Redlock's node timeout, every master down) the gap is an
   * outage's, as during a restart; the same delay within the bound (token 0) must fail.
   */
  private RunResult noLeaderThroughADelay(long outage) {
    handOffs();
    at(500, "faults", Kind.DELAY_BEGIN, "-", outage, "all workers 200 ms each way");
    at(4_500, "faults", Kind.DELAY_END, "-", outage, "");
    term("w1", 4, 4_800, 4_900);
    runEnds(5_000, "w2", "w3");
    return check(Scenario.DELAY, 1);
  }

  @Test
  void noLeaderWhileADelayBeyondTheBackendsPerCallBoundLasts_passes() {
    assertThat(noLeaderThroughADelay(1).failures()).isEmpty();
  }

  @Test
  void noLeaderWhileADelayWithinTheBackendsPerCallBoundLasts_fails() {
    assertThat(noLeaderThroughADelay(0).failures())
        .anyMatch(f -> f.contains("election torture-e had no leader for 4400 ms"));
  }

  @Test
  void aLateSuccessor_fails() {
    killedLeader(5_000);
    assertThat(check(Scenario.KILL, 1).failures())
        .anyMatch(f -> f.equals("new leader after a fault took 4000 ms, over the bound of 3666 ms"))
        .anyMatch(f -> f.contains("election torture-e had no leader for 4000 ms"));
  }

  @Test
  void noSuccessorAtAll_fails() {
    handOffs();
    elected("w1", 4, 500);
    at(1_000, "faults", Kind.KILL, E, 0, "w1");
    assertThat(check(Scenario.KILL, 1).failures())
        .anyMatch(f -> f.startsWith("no leader of torture-e after the KILL of w1"));
  }

  @Test
  void aRevocationToldTwice_fails() {
    handOffs();
    at(450, "w3", Kind.REVOKED, E, 3, "#3 RESIGNED resigned");
    assertThat(check(Scenario.CALM, 0).failures())
        .anyMatch(
            f ->
                f.startsWith(
                    "notices: 1 revocation(s) told twice, or of a term that was not the"
                        + " candidate's"));
  }

  @Test
  void aResignationNobodyAskedFor_fails() {
    handOffs();
    int number = elected("w1", 4, 500);
    at(600, "w1", Kind.REVOKED, E, 4, "#" + number + " RESIGNED resigned");
    assertThat(check(Scenario.CALM, 0).failures())
        .anyMatch(f -> f.startsWith("notices: 1 RESIGNED told although the candidate did not"));
  }

  @Test
  void aSessionNoticeOutOfOrder_fails_andAnUncertainLeaderStillLeads() {
    handOffs();
    int number = elected("w1", 4, 500);
    at(600, "w1", Kind.RESTORED, E, 4, "#" + number); // restored without uncertain
    at(700, "w1", Kind.UNCERTAIN, E, 4, "#" + number);
    elected("w2", 5, 800); // w1 uncertain, not revoked: two leaders
    RunResult result = check(Scenario.CALM, 0);
    assertThat(result.overlaps()).isEqualTo(1);
    assertThat(result.failures())
        .anyMatch(f -> f.startsWith("notices: 1 uncertain or restored notice(s) out of order"));
  }

  @Test
  void aRevocationNoFaultExplains_isSpurious() {
    handOffs();
    int number = elected("w1", 4, 500);
    at(1_500, "w1", Kind.REVOKED, E, 4, "#" + number + " EXPIRED renewal failed");
    term("w2", 5, 1_600, 1_700);
    RunResult result = check(Scenario.SHORT_PAUSE, 1);
    assertThat(result.spuriousLosses()).isEqualTo(1);
    assertThat(result.failures()).anyMatch(f -> f.contains("spurious"));
  }

  /**
   * w1's term (epoch 4) is deleted on the server at 600 ms; w2 is elected at once while w1 still
   * believes it leads, until its next renewal tells it TAKEN_OVER: explained, as after a pause.
   */
  @Test
  void aTermDeletedUnderItsLeader_overlapsWithoutFailing() {
    handOffs();
    int number = elected("w1", 4, 500);
    at(600, "faults", Kind.FORCE_RELEASE, E, 4, "w1");
    term("w2", 5, 620, 900);
    at(1_100, "w1", Kind.REVOKED, E, 4, "#" + number + " TAKEN_OVER deleted");
    at(1_101, "w1", Kind.ACQUIRING, E, 0, "competes again");
    runEnds(1_200, "w1", "w2", "w3");
    RunResult result = check(Scenario.FORCE_RELEASE, 1);
    assertThat(result.failures()).isEmpty();
    assertThat(result.overlapsExplainedByPause()).isEqualTo(1);
  }

  @Test
  void tooFewTerms_proveNothing() {
    term("w1", 1, 100, 200);
    assertThat(check(Scenario.CALM, 0).failures())
        .anyMatch(f -> f.equals("only 1 term(s): the run proved nothing"));
  }
}
