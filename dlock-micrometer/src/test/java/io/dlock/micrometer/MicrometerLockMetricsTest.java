package io.dlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockEventListener;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.testkit.FaultyBackend;
import io.dlock.testkit.InMemoryLockBackend;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The meters after a known sequence of grants, waits, failures, losses and renewal failures, on a
 * client made without Spring over the in-memory backend.
 */
class MicrometerLockMetricsTest {
  private static final Duration AWAIT = Duration.ofSeconds(10);

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final InMemoryLockBackend server = new InMemoryLockBackend();
  private final FaultyBackend network = new FaultyBackend(server);
  private final MicrometerLockMetrics metrics =
      MicrometerLockMetrics.builder(registry).lockTag(LockTags.patterns("stock:*")).build();
  private final LockClient client =
      LockClients.create(network, LockClientOptions.defaults().withEventListener(metrics));

  /** Another process on the same server, without metrics. */
  private final LockClient other =
      LockClients.create(server.sharedView(), LockClientOptions.defaults());

  MicrometerLockMetricsTest() {
    metrics.bindTo(client);
  }

  @AfterEach
  void close() {
    network.restore();
    client.close();
    other.close();
  }

  @Test
  void grantsAndHoldsAreTimedUnderTheLocksPatternNeverItsKey() {
    for (String sku : new String[] {"sku-1", "sku-2", "sku-3"}) {
      try (Lease lease = client.lock("stock:" + sku).tryAcquire().orElseThrow()) {
        assertThat(lease.isValid()).isTrue();
      }
    }
    try (Lease unmatched = client.lock("order-7").tryAcquire().orElseThrow()) {
      assertThat(gauge("dlock.locks.held", null)).isEqualTo(1);
    }

    assertThat(timer("dlock.acquire", "stock:*").count()).isEqualTo(3);
    assertThat(timer("dlock.acquire", LockTags.OTHER).count()).isEqualTo(1);
    assertThat(timer("dlock.hold", "stock:*").count()).isEqualTo(3);
    assertThat(timer("dlock.acquire.wait", "stock:*").max(TimeUnit.NANOSECONDS)).isZero();
    assertThat(registry.getMeters())
        .extracting(m -> m.getId().getTag("lock"))
        .allMatch(lock -> lock == null || lock.equals("stock:*") || lock.equals("other"));
    assertThat(registry.getMeters())
        .extracting(m -> m.getId().getTag("backend"))
        .containsOnly("in-memory");
    assertThat(gauge("dlock.locks.held", null)).isZero();
  }

  @Test
  void permitsAreTimedAndCountedUnderTheirSemaphoresName() throws Exception {
    io.dlock.LeasedSemaphore exports = client.semaphore("stock:exports", 2);
    io.dlock.Permit first = exports.tryAcquire().orElseThrow();
    try (io.dlock.Permit second = exports.tryAcquire().orElseThrow()) {
      assertThat(gauge("dlock.locks.held", null)).isEqualTo(2);
    }
    first.release();
    assertThat(timer("dlock.acquire", "stock:*").count()).isEqualTo(2);
    assertThat(timer("dlock.hold", "stock:*").count()).isEqualTo(2);
    assertThat(registry.getMeters())
        .extracting(m -> m.getId().getTag("lock"))
        .as("never the permit's internal grant name")
        .allMatch(lock -> lock == null || lock.equals("stock:*"));
  }

  @Test
  void aWaitingAcquisitionIsAWaiterUntilItGetsTheLock() throws Exception {
    Lease held = other.lock("stock:sku-9").tryAcquire().orElseThrow();
    CompletableFuture<Lease> waiting = client.lock("stock:sku-9").acquireAsync(AWAIT);
    await().atMost(AWAIT).until(() -> gauge("dlock.waiters", "stock:*") == 1);

    held.release();
    Lease lease = waiting.get(AWAIT.toSeconds(), TimeUnit.SECONDS);

    assertThat(waitersGauge("stock:*")).isZero();
    Timer waited = timer("dlock.acquire.wait", "stock:*");
    assertThat(waited.count()).isEqualTo(1);
    assertThat(waited.max(TimeUnit.NANOSECONDS)).isPositive();
    lease.release();
  }

  @Test
  void failedAcquisitionsAreCountedByCauseAndAnEndedWaitIsNoLongerAWaiter() {
    Lease held = other.lock("stock:sku-5").tryAcquire().orElseThrow();

    assertThat(client.lock("stock:sku-5").tryAcquire()).isEmpty();
    assertThatThrownBy(() -> client.lock("stock:sku-5").acquire(Duration.ofMillis(50)))
        .isInstanceOf(LockTimeoutException.class);
    network.cut();
    assertThatThrownBy(() -> client.lock("stock:sku-6").tryAcquire())
        .isInstanceOf(io.dlock.BackendUnavailableException.class);

    assertThat(counter("dlock.acquire.failures", "cause", "timeout")).isEqualTo(2);
    assertThat(counter("dlock.acquire.failures", "cause", "backend_unavailable")).isEqualTo(1);
    assertThat(waitersGauge("stock:*")).isZero(); // registered by the wait, back to zero after it
    held.release();
  }

  @Test
  void aLeaseDeletedBehindItsHoldersBackIsCountedAsTakenOver() {
    Lease lease =
        client
            .lock("stock:sku-4", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();

    server.delete("stock:sku-4");

    await().atMost(AWAIT).until(() -> counter("dlock.leases.lost", "reason", "taken_over") == 1);
    assertThat(lease.isValid()).isFalse();
    lease.release();
  }

  @Test
  void renewalCallsThatFailAreCountedUntilTheLeaseRunsOut() {
    Lease lease =
        client
            .lock("stock:sku-8", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();

    network.cut();

    await().atMost(AWAIT).until(() -> counter("dlock.leases.lost", "reason", "expired") == 1);
    assertThat(registry.get("dlock.renewal.failures").counter().count()).isGreaterThanOrEqualTo(1);
    // Both counters of one failed call are incremented one after the other on the event thread.
    await()
        .atMost(AWAIT)
        .until(
            () ->
                registry.get("dlock.renewal.failed.leases").counter().count()
                    == registry.get("dlock.renewal.failures").counter().count());
    assertThat(lease.isValid()).isFalse();
  }

  @Test
  void byDefaultEveryLockSharesOneTagValue() {
    SimpleMeterRegistry own = new SimpleMeterRegistry();
    MicrometerLockMetrics plain = MicrometerLockMetrics.builder(own).build();
    try (LockClient c =
        LockClients.create(
            server.sharedView(), LockClientOptions.defaults().withEventListener(plain))) {
      plain.bindTo(c);
      for (int i = 0; i < 50; i++) {
        c.lock("job-" + i).tryAcquire().orElseThrow().release();
      }
    }
    assertThat(own.get("dlock.acquire").timers()).hasSize(1);
    assertThat(own.get("dlock.acquire").timer().getId().getTag("lock")).isEqualTo(LockTags.ALL);
    assertThat(own.get("dlock.acquire").timer().count()).isEqualTo(50);
  }

  @Test
  void aProbeTheCallerCountsElsewhereCanBeLeftOut() {
    SimpleMeterRegistry own = new SimpleMeterRegistry();
    MicrometerLockMetrics probing =
        MicrometerLockMetrics.builder(own)
            .backendName(() -> "memory")
            .countFailureWhen((name, failure) -> !name.startsWith("probe:"))
            .build();
    Lease held = other.lock("probe:x").tryAcquire().orElseThrow();
    Lease heldToo = other.lock("real:x").tryAcquire().orElseThrow();
    try (LockClient c =
        LockClients.create(
            server.sharedView(), LockClientOptions.defaults().withEventListener(probing))) {
      assertThat(c.lock("probe:x").tryAcquire()).isEmpty();
      assertThat(c.lock("real:x").tryAcquire()).isEmpty(); // the control: this one counts
    }
    held.release();
    heldToo.release();
    assertThat(own.get("dlock.acquire.failures").counters())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.count()).isEqualTo(1);
              assertThat(c.getId().getTag("backend")).isEqualTo("memory");
            });
  }

  @Test
  void everyMetricOfTheSampleDashboardIsOneThisModuleRegisters() throws Exception {
    // Make every meter exist: a grant and hold, a wait, a failure, a loss and a renewal failure.
    client.lock("stock:sku-1").tryAcquire().orElseThrow().release();
    Lease held = other.lock("stock:sku-2").tryAcquire().orElseThrow();
    assertThatThrownBy(() -> client.lock("stock:sku-2").acquire(Duration.ofMillis(20)))
        .isInstanceOf(LockTimeoutException.class);
    held.release();
    client
        .lock("stock:sku-3", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
        .tryAcquire()
        .orElseThrow();
    network.cut();
    await().atMost(AWAIT).until(() -> counter("dlock.leases.lost", "reason", "expired") == 1);

    Set<String> registered = new TreeSet<>();
    registry.getMeters().forEach(m -> registered.add(m.getId().getName()));
    String dashboard = Files.readString(Path.of("..", "docs", "grafana", "dlock-dashboard.json"));
    Matcher names = Pattern.compile("dlock_[a-z_]+").matcher(dashboard);
    Set<String> used = new TreeSet<>();
    while (names.find()) {
      // Prometheus's names for Micrometer's: dots become underscores, timers gain _seconds_*,
      // counters _total.
      used.add(
          names
              .group()
              .replaceFirst("_seconds_(count|sum|max|bucket)$", "")
              .replaceFirst("_total$", "")
              .replace('_', '.'));
    }
    assertThat(used).isNotEmpty();
    assertThat(registered).containsAll(used);
    assertThat(used).as("every meter has a panel").containsAll(registered);
  }

  @Test
  void aWaitIsTakenBackFromTheSeriesItWasCountedInEvenIfTheTagOfItsNameChanges() throws Exception {
    SimpleMeterRegistry own = new SimpleMeterRegistry();
    java.util.concurrent.atomic.AtomicReference<String> tagNow =
        new java.util.concurrent.atomic.AtomicReference<>("other");
    MicrometerLockMetrics learning =
        MicrometerLockMetrics.builder(own).lockTag(name -> tagNow.get()).build();
    Lease held = other.lock("stock:sku-7").tryAcquire().orElseThrow();
    try (LockClient c =
        LockClients.create(
            server.sharedView(), LockClientOptions.defaults().withEventListener(learning))) {
      learning.bindTo(c);
      CompletableFuture<Lease> waiting = c.lock("stock:sku-7").acquireAsync(AWAIT);
      await()
          .atMost(AWAIT)
          .until(() -> own.get("dlock.waiters").tag("lock", "other").gauge().value() == 1);
      tagNow.set("stock"); // a pattern learned while the wait goes on
      held.release();
      waiting.get(AWAIT.toSeconds(), TimeUnit.SECONDS).release();
    }
    assertThat(own.get("dlock.waiters").tag("lock", "other").gauge().value()).isZero();
    assertThat(own.find("dlock.waiters").tag("lock", "stock").gauge()).isNull();
  }

  @Test
  void waitersCountedBeforeBindToAreRegisteredWithTheRealBackendTag() throws Exception {
    SimpleMeterRegistry own = new SimpleMeterRegistry();
    MicrometerLockMetrics late = MicrometerLockMetrics.builder(own).build();
    java.util.concurrent.CountDownLatch waitStarted = new java.util.concurrent.CountDownLatch(1);
    LockEventListener both =
        LockEventListener.allOf(
            late,
            new LockEventListener() {
              @Override
              public void waiting(String lockName) {
                waitStarted.countDown();
              }
            });
    Lease held = other.lock("late:1").tryAcquire().orElseThrow();
    try (LockClient c =
        LockClients.create(
            server.sharedView(), LockClientOptions.defaults().withEventListener(both))) {
      CompletableFuture<Lease> waiting = c.lock("late:1").acquireAsync(AWAIT);
      assertThat(waitStarted.await(AWAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(own.find("dlock.waiters").gauge()).isNull(); // counted, but no backend tag yet

      late.bindTo(c);

      assertThat(own.get("dlock.waiters").gauge().getId().getTag("backend")).isEqualTo("in-memory");
      assertThat(own.get("dlock.waiters").gauge().value()).isEqualTo(1);
      held.release();
      waiting.get(AWAIT.toSeconds(), TimeUnit.SECONDS).release();
    }
    assertThat(own.get("dlock.waiters").gauge().value()).isZero();
    assertThat(own.find("dlock.waiters").tag("backend", "unknown").gauge()).isNull();
  }

  private double waitersGauge(String lock) {
    return registry.get("dlock.waiters").tag("lock", lock).gauge().value(); // throws if absent
  }

  private Timer timer(String name, String lock) {
    return registry.get(name).tag("lock", lock).timer();
  }

  private double counter(String name, String tag, String value) {
    var found = registry.find(name).tag(tag, value).counter();
    return found == null ? 0 : found.count();
  }

  private double gauge(String name, String lock) {
    var search = registry.find(name);
    if (lock != null) {
      search = search.tag("lock", lock);
    }
    Gauge gauge = search.gauge();
    return gauge == null ? 0 : gauge.value();
  }
}
