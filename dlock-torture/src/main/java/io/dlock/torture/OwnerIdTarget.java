package io.dlock.torture;

import java.time.Duration;
import java.util.List;

/**
 * A backend in the owner-id mode: workers share owner ids two by two across processes ({@code
 * LockOptions.withOwnerId}), so that a grant ended behind its holders' backs (a forced release, an
 * expiry during a partition, a kill) can be granted again to the same owner id elsewhere while the
 * former holder still releases and renews its old one. The servers are the wrapped target's.
 */
final class OwnerIdTarget extends ForwardingTarget {
  static final String SUFFIX = "-owner-id";

  /** The backends whose owner ids re-enter across clients. */
  static final List<String> BASES =
      List.of("redis", "zookeeper", "postgres", "redlock", "redis-external", "postgres-external");

  OwnerIdTarget(Target base) {
    super(base);
  }

  @Override
  public String name() {
    return base.name() + SUFFIX;
  }

  @Override
  public boolean sharedOwnerIds() {
    return true;
  }

  @Override
  public List<Scenario> defaultScenarios() {
    return List.of(Scenario.FORCE_RELEASE, Scenario.PARTITION, Scenario.KILL, Scenario.PAUSE);
  }

  /**
   * The base's bound plus the longest critical section (1.5 leases, in the partition scenario): a
   * holder's partner of the same owner id may be inside the very grant when the holder is cut off
   * or killed, and keeps it (renewing it) until its own hold ends; only then does the cut-off
   * hold's count on the server run out with the lease. {@code redis-owner-id}/partition went 65 and
   * 450 ms over the base's bound this way (a 4-minute soak and a 5-second run, each on a loaded
   * machine), with every safety criterion held.
   */
  @Override
  public Duration nextGrantBound(Duration lease) {
    return base.nextGrantBound(lease).plus(lease.multipliedBy(3).dividedBy(2));
  }

  @Override
  public boolean restartable() {
    return base.restartable();
  }
}
