package io.dlock.torture;

import java.util.ArrayList;
import java.util.List;

/**
 * Criterion 2 of a semaphore run: no write accepted by the fenced register through a permit that
 * had ended on the server. The register's {@link PermitFence} asks the backend; this judges its
 * verdicts from the history alone: a write the register accepted (an {@code FWRITE ... ok}) with
 * the token of hold {@code h} is stale if, before it was served, {@code h}'s grant was deleted
 * ({@code FORCE_RELEASE} of its token) or its permits were provably back to others ({@link
 * PermitOccupancy#provenBack}: others held so many that the server cannot have counted {@code h}'s
 * any more). A write through a token no hold of that worker was granted is stale too.
 */
final class PermitFenceCriterion implements Criterion {
  final int accepted;
  final int stale;
  private final String first;

  PermitFenceCriterion(RunHistory run, int bound) {
    int accepted = 0;
    int stale = 0;
    String first = null;
    for (Event e : run.events) {
      if (e.kind() != Event.Kind.FWRITE || !e.source().equals("register")) {
        continue;
      }
      String[] words = e.detail().split(" ");
      if (words.length < 2 || !words[1].equals(PermitFence.OK)) {
        continue;
      }
      accepted++;
      String worker = words[0];
      Hold h =
          run.bySource.getOrDefault(worker, List.of()).stream()
              .filter(x -> x.lock.equals(e.lock()) && x.token == e.token() && x.start <= e.nanos())
              .reduce((a, b) -> b)
              .orElse(null);
      String why = staleBecause(run, bound, h, e);
      if (why != null) {
        stale++;
        if (first == null) {
          first =
              worker
                  + " token "
                  + e.token()
                  + " at "
                  + Checker.millis(e.nanos() - run.origin())
                  + " ms: "
                  + why;
        }
      }
    }
    this.accepted = accepted;
    this.stale = stale;
    this.first = first;
  }

  /** Why the accepted write {@code w} through hold {@code h} was stale, or null if it was not. */
  private static String staleBecause(RunHistory run, int bound, Hold h, Event w) {
    if (h == null) {
      return "no grant of that token to that worker";
    }
    for (Event f : run.faultEvents) {
      if (f.kind() == Event.Kind.FORCE_RELEASE
          && f.lock().equals(h.lock)
          && f.token() == h.token
          && f.nanos() < w.nanos()
          && f.nanos() > h.start) {
        return "its grant was deleted "
            + Checker.millis(w.nanos() - f.nanos())
            + " ms before (force-release)";
      }
    }
    PermitOccupancy occupancy = new PermitOccupancy(run.byLock.get(h.lock), bound);
    long back = occupancy.provenBack(h, h.count, h.start, w.nanos());
    if (back != Long.MAX_VALUE) {
      return "its permits were back to others "
          + Checker.millis(w.nanos() - back)
          + " ms before ("
          + occupancy.heldAt(back, h)
          + " held by others, bound "
          + bound
          + ")";
    }
    return null;
  }

  @Override
  public List<String> failures() {
    List<String> failures = new ArrayList<>();
    if (stale > 0) {
      failures.add(
          stale
              + " stale write(s) accepted through a permit that had ended (first: "
              + first
              + ")");
    }
    return failures;
  }
}
