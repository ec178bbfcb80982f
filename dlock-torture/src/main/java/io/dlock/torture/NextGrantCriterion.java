package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Liveness after a fault: the time from a fault on a holder (killed, cut off, or paused past its
 * lease) to the next grant of its lock, to anyone. The run's probe contends for the lock right
 * after the fault, so someone is always waiting: the time measures the backend, bounded by the
 * next-grant bound, and a lock never granted again fails the run.
 *
 * <p>In an election run the fault hits the leader (the next to enter its work), and the time is to
 * a new leader's election: the other candidates compete all the time, so no probe is needed. The
 * bound is the same: the time a dead holder keeps the lock (the lease; ZooKeeper's session
 * timeout), one renewal interval and 1 s.
 */
final class NextGrantCriterion implements Criterion {
  final long worst;

  /** One sample per fault on a holder whose lock was granted again. */
  private final List<Long> toNextGrant = new ArrayList<>();

  private final List<String> failures = new ArrayList<>();

  NextGrantCriterion(Scenario scenario, RunHistory run, Duration nextGrantBound) {
    Workload workload = run.workload;
    for (Event f : run.faultEvents) {
      if (f.kind() != Event.Kind.KILL
          && !(f.kind() == Event.Kind.STOP && scenario == Scenario.PAUSE)
          && f.kind() != Event.Kind.CUT_BEGIN) {
        continue;
      }
      long next =
          run.holds.stream()
              .filter(h -> h.lock.equals(f.lock()) && h.start > f.nanos())
              .mapToLong(h -> h.start)
              .min()
              .orElse(Long.MAX_VALUE);
      if (next == Long.MAX_VALUE) {
        failures.add(
            (workload == Workload.ELECTION ? "no leader of " : "no grant of ")
                + f.lock()
                + " after the "
                + f.kind()
                + " of "
                + f.detail());
      } else {
        toNextGrant.add(next - f.nanos());
      }
    }
    this.worst = toNextGrant.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (worst > nextGrantBound.toNanos()) {
      failures.add(
          workload.nextGrant()
              + " after a fault took "
              + Checker.millis(worst)
              + " ms, over the bound of "
              + nextGrantBound.toMillis()
              + " ms");
    }
  }

  int samples() {
    return toNextGrant.size();
  }

  /** The median sample (the upper one of an even count), or -1 without any. */
  long median() {
    return toNextGrant.stream()
        .mapToLong(Long::longValue)
        .sorted()
        .skip(toNextGrant.size() / 2)
        .findFirst()
        .orElse(-1);
  }

  @Override
  public List<String> failures() {
    return failures;
  }
}
