package io.dlock.torture;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A negative control over a sound backend: its workers misbehave in one way that leaves a lock held
 * by nobody, and its runs must fail on the criterion meant to catch exactly that.
 *
 * <ul>
 *   <li>{@code redis-leaky-cancel}: a worker whose {@code cancel} of an async acquisition returns
 *       false (the grant came first) drops the lease without releasing it; its client keeps
 *       renewing it. {@link AsyncCancelCriterion} must report the lease held by nobody.
 *   <li>{@code redis-abandon-at-close}: a worker closing its client ({@code client-close}) first
 *       stretches its lease past the next-grant bound and abandons it ({@code Lease.abandon}): the
 *       lock stays held by nobody after the close, and {@link ClientCloseCriterion} must report
 *       that nobody else was granted it in time.
 * </ul>
 */
final class ControlTarget extends ForwardingTarget {
  static final String LEAKY_CANCEL = "redis-leaky-cancel";
  static final String ABANDON_AT_CLOSE = "redis-abandon-at-close";

  private final String name;
  private final Scenario scenario;
  private final boolean abandonAtClose;

  private ControlTarget(Target base, String name, Scenario scenario, boolean abandonAtClose) {
    super(base);
    this.name = name;
    this.scenario = scenario;
    this.abandonAtClose = abandonAtClose;
  }

  static ControlTarget leakyCancel(Target base) {
    return new ControlTarget(base, LEAKY_CANCEL, Scenario.CALM, false);
  }

  static ControlTarget abandonAtClose(Target base) {
    return new ControlTarget(base, ABANDON_AT_CLOSE, Scenario.CLIENT_CLOSE, true);
  }

  @Override
  public Map<String, String> workerArgs(Duration lease) {
    if (abandonAtClose) {
      // Past the next-grant bound (lease + renewal + 1 s) by half a lease, short of the probe's
      // wait (the bound and two leases), so that the probe's late grant shows how late.
      Duration abandonFor = nextGrantBound(lease).plus(lease.dividedBy(2));
      return Map.of("abandon-at-close-ms", Long.toString(abandonFor.toMillis()));
    }
    return Map.of("async-cancel", "leak");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public List<Scenario> defaultScenarios() {
    return List.of(scenario);
  }
}
