package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The async-cancel workload ({@link AsyncAcquirer}): every future ends, and a cancelled acquisition
 * leaves nothing held. Three checks, each reported with the prefix {@code async-cancel:}:
 *
 * <ul>
 *   <li>every {@code acquireAsync} future ends (granted, failed or cancelled) within the worker's
 *       wait and one operation timeout, unless its worker was killed or stopped, or the history
 *       ends before then;
 *   <li>no worker's client lists a grant at the worker's end ({@code HELD_AT_END}) that none of its
 *       holds accounts for: a cancelled acquisition's grant not given back, a lease dropped;
 *   <li>after each cancel, the lock is not free by every holder's account while a worker waits for
 *       it for longer than the next-grant bound, counted from the cancel or the wait's start,
 *       whichever is later, up to the lock's next grant (restarts and gaps a client's close began
 *       are left out, as the stuck-lock criterion leaves them out).
 * </ul>
 */
final class AsyncCancelCriterion implements Criterion {
  static final String PREFIX = "async-cancel: ";

  int acquisitions;
  int cancelled;
  int cancelledTooLate;
  private final List<String> failures = new ArrayList<>();

  AsyncCancelCriterion(RunSettings settings, RunHistory run, Duration nextGrantBound) {
    long futureBound = settings.workerWait().plus(Worker.OPERATION_TIMEOUT).toNanos();
    checkFuturesEnd(run, futureBound);
    for (Event e : run.events) {
      if (e.kind() == Event.Kind.HELD_AT_END) {
        failures.add(
            PREFIX
                + e.source()
                + "'s client still held "
                + e.lock()
                + " (token "
                + e.token()
                + ") at its end, by nobody's account ("
                + e.detail()
                + ")");
      }
    }
    checkFreeAfterCancels(run, nextGrantBound.toNanos());
  }

  /** Every future that began ends within {@code bound}. */
  private void checkFuturesEnd(RunHistory run, long bound) {
    Map<String, Event> begun = new HashMap<>(); // source|id -> ACQUIRING
    Map<String, Long> ended = new HashMap<>(); // source|id -> ASYNC_END
    for (Event e : run.events) {
      if (e.kind() == Event.Kind.ACQUIRING && e.detail().startsWith("async a")) {
        begun.put(e.source() + "|" + e.detail().substring("async ".length()), e);
      } else if (e.kind() == Event.Kind.ASYNC_END) {
        ended.putIfAbsent(e.source() + "|" + e.detail().split(" ")[0], e.nanos());
      } else if (e.kind() == Event.Kind.CANCEL) {
        cancelled += e.detail().startsWith("true ") ? 1 : 0;
        cancelledTooLate += e.detail().startsWith("false ") ? 1 : 0;
      }
    }
    acquisitions = begun.size();
    for (Map.Entry<String, Event> b : begun.entrySet()) {
      Event start = b.getValue();
      long deadline = start.nanos() + bound;
      Long end = ended.get(b.getKey());
      if (end != null && end <= deadline) {
        continue;
      }
      boolean unjudgeable =
          end == null && (run.killed.contains(start.source()) || run.lastEvent() < deadline);
      boolean stopped =
          run.faultEvents.stream()
              .anyMatch(
                  f ->
                      f.kind() == Event.Kind.STOP
                          && f.detail().equals(start.source())
                          && f.nanos() >= start.nanos()
                          && f.nanos() <= deadline);
      if (unjudgeable || stopped) {
        continue;
      }
      failures.add(
          PREFIX
              + "the future of "
              + start.source()
              + "'s "
              + start.detail()
              + " for "
              + start.lock()
              + " (asked "
              + Checker.millis(start.nanos() - run.origin())
              + " ms into the run) "
              + (end == null
                  ? "never ended"
                  : "ended after " + Checker.millis(end - start.nanos()) + " ms")
              + ", over the wait and the operation timeout ("
              + Checker.millis(bound)
              + " ms)");
    }
  }

  /** After each cancel, the lock is not left taken by nobody's account while waited for. */
  private void checkFreeAfterCancels(RunHistory run, long bound) {
    Map<String, List<long[]>> gapsByLock = new HashMap<>();
    Map<String, List<RunHistory.Wait>> waitsByLock = new HashMap<>();
    run.waits.forEach(w -> waitsByLock.computeIfAbsent(w.lock(), k -> new ArrayList<>()).add(w));
    long worst = 0;
    String worstDescription = null;
    for (Event cancel : run.events) {
      if (cancel.kind() != Event.Kind.CANCEL) {
        continue;
      }
      String lock = cancel.lock();
      long c = cancel.nanos();
      long nextGrant =
          run.byLock.getOrDefault(lock, List.of()).stream()
              .mapToLong(h -> h.start)
              .filter(s -> s > c)
              .min()
              .orElse(run.lastEvent());
      for (long[] gap : gapsByLock.computeIfAbsent(lock, run::freeGaps)) {
        long from = Math.max(gap[0], c);
        long to = Math.min(gap[1], nextGrant);
        if (from >= to || run.duringRestart(gap[0], gap[1]) || run.begunByAClose(lock, gap)) {
          continue;
        }
        for (RunHistory.Wait w : waitsByLock.getOrDefault(lock, List.of())) {
          if (w.end() <= from || w.start() >= to) {
            continue;
          }
          long free =
              StuckLockCriterion.longestOutside(
                  Math.max(from, w.start()),
                  Math.min(to, w.end()),
                  run.waiterCuts.getOrDefault(w.source(), List.of()));
          if (free > worst) {
            worst = free;
            worstDescription =
                lock
                    + " was free by every holder's account for "
                    + Checker.millis(free)
                    + " ms while "
                    + w.source()
                    + " waited, after "
                    + cancel.source()
                    + " cancelled an acquisition ("
                    + cancel.detail()
                    + ", "
                    + Checker.millis(c - run.origin())
                    + " ms into the run): held by nobody past the bound of "
                    + Checker.millis(bound)
                    + " ms";
          }
        }
      }
    }
    if (worst > bound) {
      failures.add(PREFIX + worstDescription);
    }
  }

  @Override
  public List<String> failures() {
    return failures;
  }
}
