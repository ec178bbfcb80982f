package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Criterion 3 of a semaphore run: the permits of a holder a fault took out (killed, cut off, or
 * paused past its lease) are back within the next-grant bound: the lease (ZooKeeper's session
 * timeout), one renewal interval and 1 s, as a lock's next grant ({@link NextGrantCriterion}).
 *
 * <p>Another permit granted after the fault proves nothing (the semaphore has more than one): the
 * victim's permits are back at the first grant after the fault at which the others hold so many
 * that, with the victim's, the bound would be exceeded ({@link PermitOccupancy#provenBack}). The
 * workers all take the semaphore's permits all the time, so such a grant comes as soon as the
 * permits are free; the run's calm after each fault lasts past the bound, so a history without one
 * by then fails the run. The fence's finding that the backend no longer lists the victim's grant
 * ({@link Event.Kind#FDELISTED}) is evidence too: the earlier of the two counts.
 */
final class PermitReturnCriterion implements Criterion {
  final long worst;
  private final List<Long> toBack = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();

  PermitReturnCriterion(Scenario scenario, RunHistory run, int bound, Duration nextGrantBound) {
    for (Event f : run.faultEvents) {
      if (f.kind() != Event.Kind.KILL
          && !(f.kind() == Event.Kind.STOP && scenario == Scenario.PAUSE)
          && f.kind() != Event.Kind.CUT_BEGIN) {
        continue;
      }
      List<Hold> holds = run.byLock.getOrDefault(f.lock(), List.of());
      Hold victim =
          run.bySource.getOrDefault(f.detail(), List.of()).stream()
              .filter(h -> h.lock.equals(f.lock()) && h.contains(f.nanos()))
              .findFirst()
              .orElse(null);
      int count = victim == null ? 1 : victim.count;
      long back =
          Math.min(
              new PermitOccupancy(holds, bound)
                  .provenBack(victim, count, f.nanos(), Long.MAX_VALUE),
              delistedAt(run, victim, f.nanos()));
      if (back != Long.MAX_VALUE) {
        toBack.add(back - f.nanos());
      } else if (run.lastEvent() >= f.nanos() + nextGrantBound.toNanos()) {
        failures.add(
            "the permit(s) of "
                + f.detail()
                + " on "
                + f.lock()
                + " never came back after the "
                + f.kind()
                + " at "
                + Checker.millis(f.nanos() - run.origin())
                + " ms");
      }
    }
    this.worst = toBack.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (worst > nextGrantBound.toNanos()) {
      failures.add(
          "permit(s) back after a fault took "
              + Checker.millis(worst)
              + " ms, over the bound of "
              + nextGrantBound.toMillis()
              + " ms");
    }
  }

  /**
   * When the fence first found the victim's grant no longer listed by the backend, at the fault at
   * the earliest, or {@link Long#MAX_VALUE}: the other evidence that its permits were back, for
   * when no grant after the fault needed them (workers take one permit at a time, and with one of
   * four killed and its replacement starting, a grant that needs the victim's permit may come late
   * or not at all: the ZooKeeper partition and MariaDB kill soaks of 2026-12-03).
   */
  private static long delistedAt(RunHistory run, Hold victim, long fault) {
    if (victim == null) {
      return Long.MAX_VALUE;
    }
    return run.events.stream()
        .filter(
            e ->
                e.kind() == Event.Kind.FDELISTED
                    && e.lock().equals(victim.lock)
                    && e.token() == victim.token)
        .mapToLong(e -> Math.max(e.nanos(), fault))
        .min()
        .orElse(Long.MAX_VALUE);
  }

  int samples() {
    return toBack.size();
  }

  /** The median sample (the upper one of an even count), or -1 without any. */
  long median() {
    return toBack.stream()
        .mapToLong(Long::longValue)
        .sorted()
        .skip(toBack.size() / 2)
        .findFirst()
        .orElse(-1);
  }

  @Override
  public List<String> failures() {
    return failures;
  }
}
