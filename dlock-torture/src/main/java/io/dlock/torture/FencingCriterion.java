package io.dlock.torture;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Fencing: tokens in order, and the registers' verdict on the writes they guarded.
 *
 * <p>A grant that began after another ended must carry a greater token, and no token is given to
 * two grants. Holds of one shared grant carry its token by design; such a hold must have been asked
 * for while the grant could still live on the server: before its last earlier hold was released,
 * or, once a hold of it ended without a confirmed release (its count stays on the server while any
 * holder renews), until a lease and a renewal after the last hold ended, or while an acquisition of
 * the same owner id, cancelled after it may have been granted, was not undone yet.
 *
 * <p>A semaphore's grants overlap, and the server orders them by when it made them, not by when
 * their answers came: a grant asked for while another was held may be answered after that other
 * ended, with a lower token. So for a semaphore the rule is judged from the ask: a grant asked for
 * after another ended must carry a greater token.
 *
 * <p>The fenced register must reject every stale write, whatever the fault. The unfenced one may
 * lose updates only where the fault breaks the lease assumption (a long pause): that is what
 * fencing is for.
 */
final class FencingCriterion implements Criterion {
  final int tokenViolations;
  private final int staleAccepted;
  private final int lostUpdates;
  private final boolean lostUpdatesExpected;
  private final Workload workload;

  FencingCriterion(RunSettings settings, RunHistory run) {
    long grace = settings.lease().toNanos() + settings.renewal().toNanos();
    int violations = 0;
    boolean overlapping = settings.workload() == Workload.SEMAPHORE;
    for (List<Hold> list : run.byLock.values()) {
      violations += tokenViolations(run, list, grace, overlapping);
    }
    this.tokenViolations = violations;
    this.staleAccepted = run.staleAccepted();
    this.lostUpdates = run.lostUpdates();
    this.lostUpdatesExpected = settings.scenario().breaksLeaseAssumption();
    this.workload = settings.workload();
  }

  @Override
  public List<String> failures() {
    List<String> failures = new ArrayList<>();
    if (tokenViolations > 0) {
      failures.add(
          tokenViolations
              + (workload == Workload.ELECTION ? " epoch(s) (fencing tokens)" : " fencing token(s)")
              + " not strictly increasing");
    }
    if (staleAccepted > 0) {
      failures.add(staleAccepted + " stale write(s) accepted by the fenced register");
    }
    if (lostUpdates > 0 && !lostUpdatesExpected) {
      failures.add(lostUpdates + " lost update(s) on the unfenced register without a long pause");
    }
    return failures;
  }

  /** The token violations among one lock's holds, given by start. */
  private static int tokenViolations(
      RunHistory run, List<Hold> list, long grace, boolean overlapping) {
    int violations = 0;
    List<Hold> byEnd = new ArrayList<>(list);
    byEnd.sort(Comparator.comparingLong(h -> h.end));
    // The greatest token among ended holds, and the greatest of another grant than that one's.
    long bestToken = Long.MIN_VALUE;
    Object bestGrant = null;
    long otherToken = Long.MIN_VALUE;
    int p = 0;
    Map<Long, Object> grantOfToken = new HashMap<>();
    Map<Object, long[]> grantLife = new HashMap<>(); // {last true release, last end, unresolved}
    for (Hold b : list) { // by start
      while (p < byEnd.size() && byEnd.get(p).end < b.start) {
        Hold ended = byEnd.get(p++);
        if (ended.grant().equals(bestGrant)) {
          bestToken = Math.max(bestToken, ended.token);
        } else if (ended.token > bestToken) {
          otherToken = bestToken;
          bestToken = ended.token;
          bestGrant = ended.grant();
        } else {
          otherToken = Math.max(otherToken, ended.token);
        }
      }
      long bound =
          overlapping
              ? endedBeforeAsked(list, b)
              : b.grant().equals(bestGrant) ? otherToken : bestToken;
      if (b.token <= bound) {
        violations++;
      }
      Object earlier = grantOfToken.putIfAbsent(b.token, b.grant());
      if (earlier != null && !earlier.equals(b.grant())) {
        violations++; // one token, two grants
      } else if (earlier != null
          && b.acquiringAt > livesUntil(grantLife.get(b.grant()), grace)
          && !askedEarlierAndHeldWhenAsked(list, b)
          && !run.cancelledOwnerAskAt(b.lock, b.owner, b.acquiringAt)) {
        violations++; // a grant that ended was given again
      }
      long[] life = grantLife.computeIfAbsent(b.grant(), g -> new long[3]);
      if ("true".equals(b.releaseResult)) {
        life[0] = Math.max(life[0], b.releasedAt);
      } else {
        life[2] = 1;
      }
      life[1] = Math.max(life[1], b.end);
    }
    return violations;
  }

  /** The greatest token of another grant's holds that ended before {@code b} was asked for. */
  private static long endedBeforeAsked(List<Hold> list, Hold b) {
    long bound = Long.MIN_VALUE;
    for (Hold other : list) {
      if (!other.grant().equals(b.grant()) && other.end < b.acquiringAt) {
        bound = Math.max(bound, other.token);
      }
    }
    return bound;
  }

  /**
   * Whether another hold of {@code b}'s grant was asked for before {@code b} and had not ended when
   * {@code b} was asked for: its request, in flight or answered later (a slow first answer), kept
   * the grant on the server across its other holds' releases, so the grant never ended. (It got the
   * same token, and a grant that ended is never given a token again, so its hold was counted while
   * the grant lived.)
   */
  private static boolean askedEarlierAndHeldWhenAsked(List<Hold> list, Hold b) {
    for (Hold other : list) {
      if (other != b
          && other.grant().equals(b.grant())
          && other.acquiringAt <= b.acquiringAt
          && other.end >= b.acquiringAt) {
        return true;
      }
    }
    return false;
  }

  /** Until when a grant may still live on the server, given its holds so far. */
  private static long livesUntil(long[] life, long grace) {
    return life[2] == 1 ? Math.max(life[0], satAdd(life[1], grace)) : life[0];
  }

  private static long satAdd(long a, long b) {
    long r = a + b;
    return r < a ? Long.MAX_VALUE : r;
  }
}
