package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A client closed under its holds and waiters ({@link ClientCloser}): for each close of a worker's
 * client while it held a lock, each failure reported with the prefix {@code client-close:},
 *
 * <ul>
 *   <li>{@code close()} returns within twice the operation timeout;
 *   <li>every wait of the worker's threads open when the close began ends within the operation
 *       timeout (refused: the client is closed), not at its own wait's end, nor never;
 *   <li>no thread of the worker is granted anything from the close's begin until its new client;
 *   <li>no other client waits for the lock, from the close to its next grant to another client (the
 *       worker's new client counts as another), longer than the next-grant bound (the probe waits
 *       for it from the close): the hold is freed, and no lock is left held by nobody. The gap this
 *       begins is judged here alone ({@link RunHistory#begunByAClose}).
 * </ul>
 */
final class ClientCloseCriterion implements Criterion {
  static final String PREFIX = "client-close: ";

  int closes;
  long worstToNextGrant = -1;
  private final List<String> failures = new ArrayList<>();

  ClientCloseCriterion(RunHistory run, Duration nextGrantBound) {
    long timeout = Worker.OPERATION_TIMEOUT.toNanos();
    for (Event close : run.events) {
      if (close.kind() != Event.Kind.CLOSE_BEGIN) {
        continue;
      }
      closes++;
      String worker = close.source();
      String lock = close.lock();
      long t = close.nanos();
      String what = worker + "'s client (closed " + Checker.millis(t - run.origin()) + " ms in)";
      long closeEnd = firstOf(run, Event.Kind.CLOSE_END, worker, t);
      long reopened = firstOf(run, Event.Kind.CLIENT_NEW, worker, t);
      if (closeEnd - t > 2 * timeout && run.lastEvent() - t > 2 * timeout) {
        failures.add(PREFIX + "close() of " + what + " did not return within 2 operation timeouts");
      }
      for (RunHistory.Wait w : run.waits) {
        if (!ofWorker(w.source(), worker) || w.start() > t || w.end() < t) {
          continue;
        }
        boolean judgeable = w.end() < run.lastEvent() || run.lastEvent() - t > timeout;
        if (judgeable && w.end() - t > timeout) {
          failures.add(
              PREFIX
                  + w.source()
                  + ", waiting for "
                  + w.lock()
                  + " in "
                  + what
                  + ", ended "
                  + Checker.millis(w.end() - t)
                  + " ms after the close began (or never), over the operation timeout ("
                  + Checker.millis(timeout)
                  + " ms)");
        }
      }
      for (Hold h : run.holds) {
        if (ofWorker(h.source, worker) && h.start > t && h.start < reopened) {
          failures.add(
              PREFIX
                  + h.source
                  + " was granted "
                  + h.lock
                  + " (token "
                  + h.token
                  + ") "
                  + Checker.millis(h.start - t)
                  + " ms after "
                  + what
                  + " began to close");
        }
      }
      // The next grant to another client: another worker's, or the closing worker's own new
      // client's (a new owner, which could only be granted once the closed client's hold was
      // freed; on a backend without wake-ups, the closing worker, asking again at once, often wins
      // against waiters that poll: the MariaDB election soak of 2026-12-03).
      long next =
          run.byLock.getOrDefault(lock, List.of()).stream()
              .filter(h -> h.start > t && (!ofWorker(h.source, worker) || h.start >= reopened))
              .mapToLong(h -> h.start)
              .min()
              .orElse(run.lastEvent());
      checkFreedInTime(run, worker, lock, t, next, what, nextGrantBound.toNanos());
    }
  }

  /**
   * From the close to the lock's next grant to another client, no other client waits for it longer
   * than the next-grant bound (its waits counted from the close or their start, whichever is later,
   * outside its own cuts): the closed client's hold was freed, and nothing of it left held by
   * nobody.
   */
  private void checkFreedInTime(
      RunHistory run, String worker, String lock, long t, long next, String what, long bound) {
    long worst = 0;
    String waiter = null;
    for (RunHistory.Wait w : run.waits) {
      if (!w.lock().equals(lock) || ofWorker(w.source(), worker) || w.end() <= t) {
        continue;
      }
      long from = Math.max(t, w.start());
      long to = Math.min(next, w.end());
      if (from >= to) {
        continue;
      }
      long free =
          StuckLockCriterion.longestOutside(
              from, to, run.waiterCuts.getOrDefault(w.source(), List.of()));
      if (free > worst) {
        worst = free;
        waiter = w.source();
      }
    }
    if (next < run.lastEvent()) {
      worstToNextGrant = Math.max(worstToNextGrant, next - t);
    }
    if (worst > bound) {
      failures.add(
          PREFIX
              + lock
              + " was held by nobody's account for "
              + Checker.millis(worst)
              + " ms while "
              + waiter
              + " waited, after "
              + what
              + " was closed holding it"
              + (next < run.lastEvent()
                  ? " (next granted to another client " + Checker.millis(next - t) + " ms after)"
                  : " (never granted to another client again)")
              + ", over the bound of "
              + Checker.millis(bound)
              + " ms");
    }
  }

  /** The worker's own history source, or one of its threads' ({@code w1.b}, {@code w1.a}). */
  static boolean ofWorker(String source, String worker) {
    return source.equals(worker) || source.startsWith(worker + ".");
  }

  private static long firstOf(RunHistory run, Event.Kind kind, String worker, long after) {
    return run.events.stream()
        .filter(e -> e.kind() == kind && e.source().equals(worker) && e.nanos() >= after)
        .mapToLong(Event::nanos)
        .findFirst()
        .orElse(Long.MAX_VALUE);
  }

  @Override
  public List<String> failures() {
    return failures;
  }
}
