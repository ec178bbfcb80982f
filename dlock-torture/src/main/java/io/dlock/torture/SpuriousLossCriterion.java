package io.dlock.torture;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * No loss signal without a cause. A loss is explained by a fault on its holder (killed, cut off, or
 * paused past the lease) since a lease before the hold began, by a forced release of its grant, or
 * by a backend restart (or member cut) during the hold, or by the close of its own client under it.
 * With shared owner ids, a fault on a worker of the same owner id explains it too: the grant may
 * live in that worker's session (ZooKeeper).
 */
final class SpuriousLossCriterion implements Criterion {
  final int losses;
  final int spurious;

  SpuriousLossCriterion(RunSettings settings, RunHistory run) {
    Scenario scenario = settings.scenario();
    Map<String, String> ownerOf = new HashMap<>();
    run.holds.stream().filter(h -> h.owner != null).forEach(h -> ownerOf.put(h.source, h.owner));
    int losses = 0;
    int spurious = 0;
    for (Hold h : run.holds) {
      if (h.lostAt == Long.MAX_VALUE) {
        continue;
      }
      losses++;
      boolean explainedLoss =
          run.faultEvents.stream()
                  .anyMatch(
                      f ->
                          sharesGrantWith(h, f.detail(), ownerOf)
                              && (f.kind() == Event.Kind.KILL
                                  || f.kind() == Event.Kind.CUT_BEGIN
                                  || (f.kind() == Event.Kind.STOP && scenario == Scenario.PAUSE))
                              && f.nanos() <= h.lostAt
                              && f.nanos() >= h.start - settings.lease().toNanos())
              || run.forcedHolds.contains(h)
              // Its own client closed under it (client-close): told CLIENT_CLOSED, released.
              || run.closesBySource.getOrDefault(h.source, List.of()).stream()
                  .anyMatch(t -> h.start <= t && t <= h.lostAt)
              // Told during a backend restart or within two leases after it: a hold lost later
              // was not lost to the restart (its renewals went through again meanwhile).
              || run.restartWindows.stream().anyMatch(w -> w[0] <= h.lostAt && h.lostAt <= w[1]);
      if (!explainedLoss) {
        spurious++;
      }
    }
    this.losses = losses;
    this.spurious = spurious;
  }

  @Override
  public List<String> failures() {
    if (spurious > 0) {
      return List.of(spurious + " spurious loss signal(s)");
    }
    return List.of();
  }

  /** Whether a fault on {@code victim} could take {@code h}'s grant: its own, or its owner id's. */
  private static boolean sharesGrantWith(Hold h, String victim, Map<String, String> ownerOf) {
    return h.source.equals(victim) || (h.owner != null && h.owner.equals(ownerOf.get(victim)));
  }
}
