package io.dlock.torture;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every notice of a candidate told once per change, in order (docs/election.md): {@code elected},
 * then {@code uncertain} and {@code restored} in pairs, then {@code revoked}, once per term; and
 * the revocation's reason one the candidate could have caused only by asking ({@code RESIGNED}
 * after it began to resign or close its candidacy, {@code CLIENT_CLOSED} after it began to close
 * its client). Each failure is reported with the prefix {@code notices:}, one line per kind, with a
 * count and the first case:
 *
 * <ul>
 *   <li>a term revoked twice, or a revocation for a term that was not the candidate's open one;
 *   <li>a term elected while the candidate's previous term was not revoked yet (an epoch given
 *       twice is {@link FencingCriterion}'s to report);
 *   <li>a term of a live candidate never revoked by the history's end (the candidate closes its
 *       candidacy and waits for the notice before it exits, so every term ends with one);
 *   <li>{@code uncertain} or {@code restored} out of their order, or outside a term;
 *   <li>a {@code RESIGNED} or {@code CLIENT_CLOSED} nobody asked for.
 * </ul>
 *
 * A candidate killed is told nothing more: its open term is not expected to end with a notice. It
 * is applied to election runs alone.
 */
final class ElectionNoticeCriterion implements Criterion {
  static final String PREFIX = "notices: ";

  int revocations;

  /** Per kind of failure: how many, and the first. */
  private final Map<String, List<String>> found = new LinkedHashMap<>();

  private static final class Candidate {
    long openEpoch = -1;
    boolean uncertain;
    // Asked for since its last such notice: a resignation or its candidacy's close (RELEASING, of
    // its term or, at the run's end, of none: a term told meanwhile is resigned by that close), a
    // close of its client (CLOSE_BEGIN). Kept until a notice answers it: a term lost just before
    // its leader resigned is told so, and the resignation may end the next one.
    boolean asked;
    boolean closing;
  }

  ElectionNoticeCriterion(RunHistory run) {
    Map<String, Candidate> candidates = new HashMap<>();
    Set<String> killed = new HashSet<>();
    for (Event e : run.events) {
      if (e.kind() == Event.Kind.KILL) {
        killed.add(e.detail());
        candidates.remove(e.detail());
        continue;
      }
      if (killed.contains(e.source())) {
        continue;
      }
      String at = e.source() + " (" + Checker.millis(e.nanos() - run.origin()) + " ms in)";
      switch (e.kind()) {
        case ELECTED -> {
          Candidate c = candidates.computeIfAbsent(e.source(), s -> new Candidate());
          if (c.openEpoch >= 0) {
            add(
                "term(s) elected before the candidate's previous term was revoked",
                at + ": epoch " + e.token() + " while epoch " + c.openEpoch + " stood");
          }
          c.openEpoch = e.token();
          c.uncertain = false;
        }
        case UNCERTAIN, RESTORED -> {
          Candidate c = candidates.computeIfAbsent(e.source(), s -> new Candidate());
          boolean uncertain = e.kind() == Event.Kind.UNCERTAIN;
          if (c.openEpoch != e.token() || c.uncertain == uncertain) {
            add(
                "uncertain or restored notice(s) out of order or outside a term",
                at + ": " + e.kind() + " of epoch " + e.token());
          }
          c.uncertain = uncertain;
        }
        case RELEASING -> candidates.computeIfAbsent(e.source(), s -> new Candidate()).asked = true;
        case CLOSE_BEGIN ->
            candidates.computeIfAbsent(e.source(), s -> new Candidate()).closing = true;
        case REVOKED -> {
          revocations++;
          Candidate c = candidates.computeIfAbsent(e.source(), s -> new Candidate());
          String reason = RunHistory.revocationReason(e.detail());
          if (c.openEpoch != e.token()) {
            add(
                "revocation(s) told twice, or of a term that was not the candidate's",
                at + ": " + reason + " of epoch " + e.token());
          } else if (reason.equals("RESIGNED") && !c.asked) {
            add("RESIGNED told although the candidate did not resign", at + ": epoch " + e.token());
          } else if (reason.equals("CLIENT_CLOSED") && !c.closing) {
            add(
                "CLIENT_CLOSED told although the candidate's client was not closed",
                at + ": epoch " + e.token());
          }
          if (c.openEpoch == e.token()) {
            c.openEpoch = -1;
            c.uncertain = false;
          }
          if (reason.equals("RESIGNED")) {
            c.asked = false;
          } else if (reason.equals("CLIENT_CLOSED")) {
            c.closing = false;
          }
        }
        default -> {
          // the candidate's other events (its waits, its work) are other criteria's
        }
      }
    }
    candidates.forEach(
        (source, c) -> {
          if (c.openEpoch >= 0) {
            add("term(s) never told revoked", source + ": epoch " + c.openEpoch);
          }
        });
  }

  private void add(String kind, String example) {
    found.computeIfAbsent(kind, k -> new ArrayList<>()).add(example);
  }

  @Override
  public List<String> failures() {
    List<String> failures = new ArrayList<>();
    found.forEach(
        (kind, examples) ->
            failures.add(
                PREFIX + examples.size() + " " + kind + " (first: " + examples.get(0) + ")"));
    return failures;
  }
}
