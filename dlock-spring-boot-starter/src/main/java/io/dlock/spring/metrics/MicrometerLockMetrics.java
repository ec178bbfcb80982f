package io.dlock.spring.metrics;

import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * {@link LockMetrics} on Micrometer. Meters, all tagged with {@code backend}:
 *
 * <ul>
 *   <li>{@code dlock.acquire} (timer, tag {@code lock}): time from the call to the grant, for every
 *       successful acquisition;
 *   <li>{@code dlock.acquire.wait} (timer, tag {@code lock}): the part of it spent waiting for
 *       another holder, zero for uncontended acquisitions;
 *   <li>{@code dlock.acquire.failures} (counter, tags {@code lock}, {@code cause}): {@code
 *       timeout}, {@code backend_unavailable}, {@code interrupted}, {@code lease_lost}, {@code
 *       error};
 *   <li>{@code dlock.leases.lost} (counter, tags {@code lock}, {@code reason}): {@code taken_over},
 *       {@code expired}, {@code lease_ended}, {@code session_lost};
 *   <li>{@code dlock.locks.held} (gauge): the grants the client holds now, taken by the starter or
 *       directly.
 * </ul>
 */
public final class MicrometerLockMetrics implements LockMetrics {
  private final MeterRegistry registry;
  private final String backend;

  /** Registers the {@code dlock.locks.held} gauge of {@code client} in {@code registry}. */
  public MicrometerLockMetrics(MeterRegistry registry, LockClient client) {
    this.registry = registry;
    this.backend = client.backendName();
    Gauge.builder("dlock.locks.held", client, c -> c.heldLeases().size())
        .description("Locks this instance holds now")
        .tag("backend", backend)
        .register(registry);
  }

  @Override
  public void acquired(String lock, Duration latency, Duration waited) {
    Timer.builder("dlock.acquire")
        .description("Time from the call to the grant of a lock")
        .tags("lock", lock, "backend", backend)
        .register(registry)
        .record(latency);
    Timer.builder("dlock.acquire.wait")
        .description("Time spent waiting for another holder to release a lock")
        .tags("lock", lock, "backend", backend)
        .register(registry)
        .record(waited);
  }

  @Override
  public void failed(String lock, FailureCause cause) {
    Counter.builder("dlock.acquire.failures")
        .description("Acquisitions that failed, by cause")
        .tags("lock", lock, "backend", backend, "cause", cause.tag())
        .register(registry)
        .increment();
  }

  @Override
  public void leaseLost(String lock, LeaseLostEvent.Reason reason) {
    Counter.builder("dlock.leases.lost")
        .description("Leases lost while held: expired, taken over, session ended")
        .tags(
            "lock",
            lock,
            "backend",
            backend,
            "reason",
            reason.name().toLowerCase(java.util.Locale.ROOT))
        .register(registry)
        .increment();
  }
}
