package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A holder that a fault took its lock from is told so. A holder paused past its lease is told of
 * its loss within one renewal interval after it resumes, and its late release does not free anyone
 * else's lock. A holder cut off from the backend is told of its loss (unless it released first: its
 * release then fails, and is reported as not done).
 */
final class ToldOfLossCriterion implements Criterion {
  private final Scenario scenario;
  private final Duration lease;
  private final Duration renewal;
  private final List<Long> resumeToLoss = new ArrayList<>();
  private final List<Long> cutToLoss = new ArrayList<>();
  private final long worstResumeToLoss;
  private final long worstCutToLoss;
  private final List<String> failures = new ArrayList<>();

  ToldOfLossCriterion(RunSettings settings, RunHistory run) {
    this.scenario = settings.scenario();
    this.lease = settings.lease();
    this.renewal = settings.renewal();
    int lateReleasesThatFreed = 0;
    if (scenario == Scenario.PAUSE) {
      lateReleasesThatFreed = measureResumes(run);
    }
    this.worstResumeToLoss = resumeToLoss.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (worstResumeToLoss > renewal.toNanos()) {
      failures.add(
          "a resumed holder learned of its loss after "
              + Checker.millis(worstResumeToLoss)
              + " ms, over one renewal interval ("
              + renewal.toMillis()
              + " ms)");
    }
    measureCuts(run);
    // How soon is reported, not judged here: the promise is to be told before anyone else is
    // granted the lock, and a later signal shows up as an overlapping hold.
    this.worstCutToLoss = cutToLoss.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (lateReleasesThatFreed > 0) {
      failures.add(lateReleasesThatFreed + " late release(s) freed a lock another had taken");
    }
  }

  /**
   * The time from each resume to its paused holder's loss signal (or failed release); returns how
   * many of their late releases freed a lock another had taken since.
   */
  private int measureResumes(RunHistory run) {
    long pauseNanos = lease.multipliedBy(2).toNanos();
    int lateReleasesThatFreed = 0;
    for (Event cont : run.faultEvents) {
      if (cont.kind() != Event.Kind.CONT) {
        continue;
      }
      for (Hold h : run.bySource.getOrDefault(cont.detail(), List.of())) {
        if (!h.paused || h.start > cont.nanos() || h.end < cont.nanos() - pauseNanos) {
          continue;
        }
        long told = h.lostAt;
        if ("false".equals(h.releaseResult)) {
          told = Math.min(told, h.releasedAt);
        }
        if (told == Long.MAX_VALUE) {
          failures.add(h.source + " was paused holding " + h.lock + " and never told of loss");
        } else {
          resumeToLoss.add(Math.max(0, told - cont.nanos()));
        }
        // A semaphore grants others all the time: PermitLossCriterion judges its late releases.
        if ("true".equals(h.releaseResult) && run.workload != Workload.SEMAPHORE) {
          boolean someoneElse =
              run.holds.stream()
                  .anyMatch(
                      o ->
                          !o.grant().equals(h.grant())
                              && o.lock.equals(h.lock)
                              && o.start > h.start
                              && o.start < h.releasedAt);
          if (someoneElse) {
            lateReleasesThatFreed++;
          }
        }
      }
    }
    return lateReleasesThatFreed;
  }

  /** The time from each cut to the loss signal of the holder it cut off. */
  private void measureCuts(RunHistory run) {
    long leaseNanos = lease.toNanos();
    for (Event cut : run.faultEvents) {
      if (cut.kind() != Event.Kind.CUT_BEGIN) {
        continue;
      }
      for (Hold h : run.bySource.getOrDefault(cut.detail(), List.of())) {
        if (!h.lock.equals(cut.lock()) || !h.contains(cut.nanos())) {
          continue;
        }
        if (h.lostAt != Long.MAX_VALUE) {
          cutToLoss.add(h.lostAt - cut.nanos());
        } else if (h.end > cut.nanos() + leaseNanos) {
          failures.add(h.source + " was cut off holding " + h.lock + " and never told of loss");
        }
      }
    }
  }

  /** The samples the report shows: cuts in a partition run, resumes otherwise. */
  int samples() {
    return scenario == Scenario.PARTITION ? cutToLoss.size() : resumeToLoss.size();
  }

  /** The worst of {@link #samples}, or -1 without any. */
  long worst() {
    return scenario == Scenario.PARTITION ? worstCutToLoss : worstResumeToLoss;
  }

  /**
   * The bound the report shows next to {@link #worst}: one renewal for a resume (judged above), the
   * lease for a cut (shown only).
   */
  Duration bound() {
    return scenario == Scenario.PARTITION ? lease : renewal;
  }

  @Override
  public List<String> failures() {
    return failures;
  }
}
