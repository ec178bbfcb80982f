package io.dlock.micrometer;

import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockEventListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The metrics of every lock of a client, on Micrometer: a {@link LockEventListener} to set with
 * {@link io.dlock.LockClientOptions#withEventListener}, then {@link #bindTo} the client it made.
 * Any client, made by any means; no Spring needed.
 *
 * <pre>{@code
 * MicrometerLockMetrics metrics =
 *     MicrometerLockMetrics.builder(registry).lockTag(LockTags.patterns("stock:*")).build();
 * LockClient client =
 *     LockClients.connect(uri, LockClientOptions.defaults().withEventListener(metrics));
 * metrics.bindTo(client);
 * }</pre>
 *
 * <p>Meters, all tagged with {@code backend} ({@link LockClient#backendName()}), and those of one
 * lock with {@code lock} (what {@link Builder#lockTag} makes of its name: {@link LockTags#ALL}
 * unless configured):
 *
 * <ul>
 *   <li>{@code dlock.acquire} (timer, {@code lock}): from the call to the grant, for every
 *       acquisition that got the lock (re-entries included); its count is the grants;
 *   <li>{@code dlock.acquire.wait} (timer, {@code lock}): the part of that spent waiting for
 *       another holder, zero for an acquisition whose first attempt got the lock;
 *   <li>{@code dlock.acquire.failures} (counter, {@code lock}, {@code cause}): acquisitions that
 *       ended without the lock: {@code timeout}, {@code backend_unavailable}, {@code interrupted},
 *       {@code lease_lost}, {@code error};
 *   <li>{@code dlock.hold} (timer, {@code lock}): from a hold's acquisition to its confirmed
 *       release (a hold that was lost is counted by {@code dlock.leases.lost} instead);
 *   <li>{@code dlock.leases.lost} (counter, {@code lock}, {@code reason}): grants lost while held:
 *       {@code taken_over}, {@code expired}, {@code lease_ended}, {@code session_lost}, {@code
 *       client_closed};
 *   <li>{@code dlock.renewal.failures} (counter): renewal calls that failed (the leases stay valid
 *       until their local end and renewal is retried), and {@code dlock.renewal.failed.leases}
 *       (counter): the leases those calls were to renew;
 *   <li>{@code dlock.waiters} (gauge, {@code lock}): acquisitions waiting for another holder now;
 *   <li>{@code dlock.locks.held} (gauge), once {@link #bindTo} was called: the grants the client
 *       holds now.
 * </ul>
 *
 * <p>One instance per client and registry: Micrometer keeps the first gauge registered under a name
 * and tags, so a second client with the same backend on the same registry needs its own registry or
 * a common tag (for instance {@code MeterFilter.commonTags}) to tell the two apart.
 */
public final class MicrometerLockMetrics implements LockEventListener {
  private static final String UNBOUND = "unknown";

  private final MeterRegistry registry;
  private final Function<String, String> lockTag;
  private final BiPredicate<String, AcquireFailure> countsFailure;
  private final @Nullable Supplier<String> backendName;
  private final Map<String, AtomicInteger> waitersByTag = new ConcurrentHashMap<>();

  /**
   * The waiting acquisitions by lock name, with the tag their wait was counted under: a mapping
   * whose answer for a name changes while it waits (the starter learns patterns as they are used)
   * must not count the end of the wait in another series than its start.
   */
  private final Map<String, Waits> waitsByName = new ConcurrentHashMap<>();

  /** Tags whose waiters gauge is registered (with the backend tag known). */
  private final Map<String, Boolean> registeredWaiterTags = new ConcurrentHashMap<>();

  private volatile @Nullable String backend;

  /** The waits under way on one lock name, and the gauge they are counted in. */
  private static final class Waits {
    final AtomicInteger gauge;
    int count;

    Waits(AtomicInteger gauge) {
      this.gauge = gauge;
    }
  }

  private MicrometerLockMetrics(Builder builder) {
    this.registry = builder.registry;
    this.lockTag = builder.lockTag;
    this.countsFailure = builder.countsFailure;
    this.backendName = builder.backendName;
  }

  /** Metrics on {@code registry}; see {@link Builder} for what can be set. */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  /**
   * Takes the {@code backend} tag from {@code client} and registers its {@code dlock.locks.held}
   * gauge. Call once, with the client this listener was set on.
   */
  public MicrometerLockMetrics bindTo(LockClient client) {
    Objects.requireNonNull(client, "client");
    backend = client.backendName();
    Gauge.builder("dlock.locks.held", client, c -> c.heldLeases().size())
        .description("Locks this client holds now")
        .tag("backend", client.backendName())
        .register(registry);
    waitersByTag.forEach(this::registerWaiters); // those counted before the backend was known
    return this;
  }

  @Override
  public void waiting(String lockName) {
    waitsByName.compute(
        lockName,
        (name, waits) -> {
          Waits w = waits == null ? new Waits(waiters(lockTag.apply(name))) : waits;
          w.count++;
          w.gauge.incrementAndGet();
          return w;
        });
  }

  @Override
  public void waitEnded(String lockName, Duration waited) {
    // Only a wait counted by waiting() is taken back: the gauge never goes below zero.
    waitsByName.computeIfPresent(
        lockName,
        (name, w) -> {
          w.gauge.decrementAndGet();
          return --w.count == 0 ? null : w;
        });
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
    if (!countsFailure.test(lockName, failure)) {
      return;
    }
    Counter.builder("dlock.acquire.failures")
        .description("Acquisitions that ended without the lock, by cause")
        .tags("lock", lockTag.apply(lockName), "backend", backend(), "cause", tag(failure))
        .register(registry)
        .increment();
  }

  @Override
  public void released(String lockName, long fencingToken, Duration held) {
    Timer.builder("dlock.hold")
        .description("Time from a hold's acquisition to its confirmed release")
        .tags("lock", lockTag.apply(lockName), "backend", backend())
        .register(registry)
        .record(held);
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
    Counter.builder("dlock.renewal.failed.leases")
        .description("Leases whose renewal call failed")
        .tags("backend", backend())
        .register(registry)
        .increment(leases);
  }

  private AtomicInteger waiters(String lock) {
    AtomicInteger count = waitersByTag.computeIfAbsent(lock, tag -> new AtomicInteger());
    registerWaiters(lock, count);
    return count;
  }

  /** Registers the waiters gauge of {@code lock} once the backend tag is known; once. */
  private void registerWaiters(String lock, AtomicInteger count) {
    String name = backend();
    if (UNBOUND.equals(name) || registeredWaiterTags.putIfAbsent(lock, Boolean.TRUE) != null) {
      return; // registered by bindTo, with the real backend tag; or already registered
    }
    Gauge.builder("dlock.waiters", count, AtomicInteger::get)
        .description("Acquisitions waiting for another holder now")
        .tags("lock", lock, "backend", name)
        .strongReference(true)
        .register(registry);
  }

  private String backend() {
    String name = backend;
    if (name == null) {
      name = backendName == null ? null : backendName.get();
      if (name == null) {
        return UNBOUND; // not bound yet; asked again at the next event
      }
      backend = name;
    }
    return name;
  }

  private static String tag(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  /** What {@link MicrometerLockMetrics} is built with. */
  public static final class Builder {
    private final MeterRegistry registry;
    private Function<String, String> lockTag = LockTags.none();
    private BiPredicate<String, AcquireFailure> countsFailure = (name, failure) -> true;
    private @Nullable Supplier<String> backendName;

    private Builder(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Maps a lock name to its {@code lock} tag; the values must be a bounded set (see {@link
     * LockTags}). Default: {@link LockTags#none()}.
     */
    public Builder lockTag(Function<String, String> lockTag) {
      this.lockTag = Objects.requireNonNull(lockTag, "lockTag");
      return this;
    }

    /**
     * The {@code backend} tag, asked at the first event, for a listener made before its client
     * (where {@link #bindTo} comes too late for the first events). Default: from {@link #bindTo}.
     */
    public Builder backendName(Supplier<String> backendName) {
      this.backendName = Objects.requireNonNull(backendName, "backendName");
      return this;
    }

    /**
     * Which failed acquisitions {@code dlock.acquire.failures} counts: for a caller whose first
     * attempt is a probe followed by a wait that counts on its own. Default: all.
     */
    public Builder countFailureWhen(BiPredicate<String, AcquireFailure> countsFailure) {
      this.countsFailure = Objects.requireNonNull(countsFailure, "countsFailure");
      return this;
    }

    public MicrometerLockMetrics build() {
      return new MicrometerLockMetrics(this);
    }
  }
}
