package io.dlock.spring.metrics;

import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockEventListener;
import io.dlock.spring.LockAcquirer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The metrics of every lock of a client, on Micrometer: a {@link LockEventListener} to set with
 * {@link io.dlock.LockClientOptions#withEventListener}. Meters, all tagged with {@code backend}:
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
 *   <li>{@code dlock.renewal.failures} (counter): renewal calls that failed (the leases stay valid
 *       until their local end and renewal is retried);
 *   <li>{@code dlock.locks.held} (gauge), once {@link #registerLocksHeldGauge} was called: the
 *       grants the client holds now.
 * </ul>
 *
 * <p>The {@code lock} tag is what {@code lockTag} makes of the lock's name; it must have a bounded
 * set of values, as lock names carry keys ({@code stock:sku-42}). The starter maps names to their
 * pattern with {@link io.dlock.spring.LockNamePatterns#patternOf}.
 */
public final class MicrometerLockMetrics implements LockEventListener {
  private final MeterRegistry registry;
  private final Function<String, String> lockTag;
  private final Supplier<String> backendName;
  private volatile @Nullable String backend;

  /**
   * @param lockTag maps a lock name to its {@code lock} tag, of a bounded set of values
   * @param backendName the {@code backend} tag ({@link LockClient#backendName()}), asked at the
   *     first event: a listener is created before the client it listens to
   */
  public MicrometerLockMetrics(
      MeterRegistry registry, Function<String, String> lockTag, Supplier<String> backendName) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.lockTag = Objects.requireNonNull(lockTag, "lockTag");
    this.backendName = Objects.requireNonNull(backendName, "backendName");
  }

  /** Registers the {@code dlock.locks.held} gauge of {@code client}. */
  public void registerLocksHeldGauge(LockClient client) {
    Gauge.builder("dlock.locks.held", client, c -> c.heldLeases().size())
        .description("Locks this instance holds now")
        .tag("backend", client.backendName())
        .register(registry);
  }

  @Override
  public void acquired(String lockName, long fencingToken, Duration latency, Duration waited) {
    String lock = lockTag.apply(lockName);
    Timer.builder("dlock.acquire")
        .description("Time from the call to the grant of a lock")
        .tags("lock", lock, "backend", backend())
        .register(registry)
        .record(latency);
    Timer.builder("dlock.acquire.wait")
        .description("Time spent waiting for another holder to release a lock")
        .tags("lock", lock, "backend", backend())
        .register(registry)
        .record(waited);
  }

  @Override
  public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
    if (failure == AcquireFailure.TIMEOUT && LockAcquirer.isFirstAttempt(lockName)) {
      return; // the starter's first attempt found the lock held; its wait follows, and counts
    }
    Counter.builder("dlock.acquire.failures")
        .description("Acquisitions that failed, by cause")
        .tags("lock", lockTag.apply(lockName), "backend", backend(), "cause", tag(failure))
        .register(registry)
        .increment();
  }

  @Override
  public void lost(LeaseLostEvent event) {
    Counter.builder("dlock.leases.lost")
        .description("Leases lost while held: expired, taken over, session ended")
        .tags(
            "lock",
            lockTag.apply(event.lockName()),
            "backend",
            backend(),
            "reason",
            tag(event.reason()))
        .register(registry)
        .increment();
  }

  @Override
  public void renewalFailed(int leases, RuntimeException failure) {
    Counter.builder("dlock.renewal.failures")
        .description("Lease renewal calls that failed; renewal is retried until the leases end")
        .tags("backend", backend())
        .register(registry)
        .increment();
  }

  private String backend() {
    String name = backend;
    if (name == null) {
      name = Objects.requireNonNull(backendName.get(), "backendName");
      backend = name;
    }
    return name;
  }

  private static String tag(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }
}
