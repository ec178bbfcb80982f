package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockEventListener;
import io.dlock.LockOptions;
import io.dlock.micrometer.MicrometerLockMetrics;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The metrics after known sequences of lock events, on a real Redis server: the starter's metrics
 * listen to the client, so they see the locks of {@code @Locked} methods, of the adapters and those
 * taken directly through the client.
 */
class LockMetricsTest {
  private static final String PREFIX = "metrics-" + UUID.randomUUID() + ":";

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
          .withPropertyValues("dlock.backend=" + TestRedis.uri(), "dlock.key-prefix=" + PREFIX)
          .withUserConfiguration(Beans.class);

  @Test
  void metricsAfterAKnownSequence() {
    runner.run(
        context -> {
          MeterRegistry meters = context.getBean(MeterRegistry.class);
          Work work = context.getBean(Work.class);
          LockClient client = context.getBean(LockClient.class);

          // 1. Three uncontended acquisitions with three different keys: one name pattern.
          for (String key : new String[] {"a", "b", "c"}) {
            work.run(key);
          }
          Timer acquire =
              meters.get("dlock.acquire").tags("lock", "work", "backend", "redis").timer();
          Timer waited =
              meters.get("dlock.acquire.wait").tags("lock", "work", "backend", "redis").timer();
          assertThat(acquire.count()).isEqualTo(3);
          assertThat(waited.count()).isEqualTo(3);
          assertThat(waited.totalTime(TimeUnit.NANOSECONDS)).isZero();
          // Tagged by the name pattern, never by the raw key.
          assertThat(meters.find("dlock.acquire").timers()).hasSize(1);

          // 2. One contended acquisition: it waits until the holder leaves.
          CountDownLatch leave = new CountDownLatch(1);
          CountDownLatch entered = new CountDownLatch(1);
          ExecutorService pool = Executors.newFixedThreadPool(2);
          try {
            Future<?> holder =
                pool.submit(
                    () -> {
                      work.holdUntil("d", entered, leave);
                      return null;
                    });
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(meters.get("dlock.locks.held").gauge().value()).isEqualTo(1.0);
            Thread[] waiter = new Thread[1];
            Future<?> contended =
                pool.submit(
                    () -> {
                      waiter[0] = Thread.currentThread();
                      work.run("d");
                    });
            await()
                .atMost(TestTiming.scaled(Duration.ofSeconds(10)))
                .until(
                    () -> waiter[0] != null && waiter[0].getState() == Thread.State.TIMED_WAITING);
            leave.countDown();
            holder.get(10, TimeUnit.SECONDS);
            contended.get(10, TimeUnit.SECONDS);
          } finally {
            pool.shutdownNow();
          }
          assertThat(acquire.count()).isEqualTo(5);
          assertThat(waited.count()).isEqualTo(5);
          assertThat(waited.max(TimeUnit.NANOSECONDS)).isPositive();
          assertThat(waited.max(TimeUnit.NANOSECONDS))
              .isLessThanOrEqualTo(acquire.max(TimeUnit.NANOSECONDS));
          assertThat(meters.get("dlock.locks.held").gauge().value()).isZero();

          // 3. One failure: another process holds the lock, wait zero, skipped.
          try (LockClient other = LockClients.connect(TestRedis.uri());
              Lease held = other.lock(PREFIX + "work:e").acquire(Duration.ZERO)) {
            assertThat(work.runOrSkip("e")).isFalse();
          }
          assertThat(
                  meters
                      .get("dlock.acquire.failures")
                      .tags("lock", "work", "backend", "redis", "cause", "timeout")
                      .counter()
                      .count())
              .isEqualTo(1.0);

          // 4. One lease lost: an administrator breaks the lock while the method holds it.
          work.holdWhileBroken("f", client, PREFIX + "work:f");
          // Lost-lease listeners run on the client's event thread, just after the lease turned
          // invalid.
          await()
              .atMost(TestTiming.scaled(Duration.ofSeconds(5)))
              .untilAsserted(
                  () ->
                      assertThat(
                              meters
                                  .find("dlock.leases.lost")
                                  .tags("lock", "work", "backend", "redis", "reason", "taken_over")
                                  .counters())
                          .singleElement()
                          .satisfies(c -> assertThat(c.count()).isEqualTo(1.0)));
          assertThat(acquire.count()).isEqualTo(6);
        });
  }

  @Test
  void locksTakenDirectlyThroughTheClientAreObservedUnderTheirPatternOrOther() {
    runner.run(
        context -> {
          MeterRegistry meters = context.getBean(MeterRegistry.class);
          LockClient client = context.getBean(LockClient.class);
          context.getBean(Work.class).run("a");

          // A name the starter builds for "work", taken directly: tagged with the pattern.
          client.lock(PREFIX + "work:direct").acquire(Duration.ZERO).release();
          assertThat(meters.get("dlock.acquire").tags("lock", "work").timer().count()).isEqualTo(2);

          // Names the starter did not build: one fixed tag, whatever the key.
          for (String key : new String[] {"x", "y", "z:1"}) {
            String name = "unrelated-" + UUID.randomUUID() + ":" + key;
            Lease lease = client.lock(name).acquire(Duration.ZERO);
            assertThat(meters.get("dlock.locks.held").gauge().value()).isEqualTo(1.0);
            lease.release();
          }
          assertThat(
                  meters
                      .get("dlock.acquire")
                      .tags("lock", LockNamePatterns.OTHER, "backend", "redis")
                      .timer()
                      .count())
              .isEqualTo(3);
          String held = "unrelated-" + UUID.randomUUID();
          try (LockClient other = LockClients.connect(TestRedis.uri());
              Lease lease = other.lock(held).acquire(Duration.ZERO)) {
            assertThat(client.lock(held).tryAcquire()).isEmpty();
          }
          assertThat(
                  meters
                      .get("dlock.acquire.failures")
                      .tags("lock", LockNamePatterns.OTHER, "cause", "timeout")
                      .counter()
                      .count())
              .isEqualTo(1.0);

          // A ShedLock job: its name is its tag.
          context
              .getBean(LockProvider.class)
              .lock(
                  new LockConfiguration(
                      Instant.now(), "nightly-report", Duration.ofSeconds(30), Duration.ZERO))
              .orElseThrow()
              .unlock();
          assertThat(meters.get("dlock.acquire").tags("lock", "nightly-report").timer().count())
              .isEqualTo(1);

          // Every series: the two patterns, other, and the job.
          assertThat(meters.find("dlock.acquire").timers())
              .extracting(t -> t.getId().getTag("lock"))
              .containsExactlyInAnyOrder("work", LockNamePatterns.OTHER, "nightly-report");
        });
  }

  @Test
  void aClientOfTheApplicationIsObservedWhenItSetsTheListenerBean() {
    runner
        .withUserConfiguration(OwnClient.class)
        .run(
            context -> {
              MeterRegistry meters = context.getBean(MeterRegistry.class);
              LockClient client = context.getBean(LockClient.class);
              assertThat(client).isSameAs(context.getBean(OwnClient.class).client);

              context.getBean(Work.class).run("a");
              client.lock(PREFIX + "work:b").acquire(Duration.ZERO).release();
              client.lock("unrelated-" + UUID.randomUUID()).acquire(Duration.ZERO).release();

              assertThat(
                      meters
                          .get("dlock.acquire")
                          .tags("lock", "work", "backend", "redis")
                          .timer()
                          .count())
                  .isEqualTo(2);
              assertThat(
                      meters
                          .get("dlock.acquire")
                          .tags("lock", LockNamePatterns.OTHER, "backend", "redis")
                          .timer()
                          .count())
                  .isEqualTo(1);
              assertThat(meters.get("dlock.locks.held").tags("backend", "redis").gauge().value())
                  .isZero();
            });
  }

  @Test
  void withTheActuatorsRegistryAndOtherListenerBeans() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                // In reverse order: the auto-configuration order must put dlock after the registry.
                AopAutoConfiguration.class,
                DlockAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class,
                MetricsAutoConfiguration.class))
        .withPropertyValues("dlock.backend=" + TestRedis.uri(), "dlock.key-prefix=" + PREFIX)
        .withUserConfiguration(WorkOnly.class, Listeners.class)
        .run(
            context -> {
              MeterRegistry meters = context.getBean(MeterRegistry.class);
              context.getBean(Work.class).run("a");

              assertThat(meters.get("dlock.acquire").tags("lock", "work").timer().count())
                  .isEqualTo(1);
              // The application's listener hears the same lock, after one that fails.
              assertThat(context.getBean(Listeners.class).acquired)
                  .containsExactly(PREFIX + "work:a");
            });
  }

  @Test
  void renewalFailuresAndLostLeasesOfADirectLock() {
    try (RedisServerProcess redis = RedisServerProcess.start()) {
      runner
          .withPropertyValues(
              "dlock.backend=" + redis.uri(),
              "dlock.operation-timeout=500ms",
              "dlock.backend-properties.commandTimeout=PT0.5S")
          .run(
              context -> {
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                LockClient client = context.getBean(LockClient.class);
                Lease lease =
                    client
                        .lock(
                            "direct-" + UUID.randomUUID(),
                            LockOptions.defaults().withRenewedLease(Duration.ofSeconds(2)))
                        .acquire(Duration.ZERO);

                redis.kill();
                await()
                    .atMost(TestTiming.scaled(Duration.ofSeconds(15)))
                    .untilAsserted(
                        () -> {
                          // find, not get: a missing meter must fail the assertion only.
                          assertThat(
                                  meters
                                      .find("dlock.renewal.failures")
                                      .tags("backend", "redis")
                                      .counters())
                              .singleElement()
                              .satisfies(c -> assertThat(c.count()).isPositive());
                          assertThat(
                                  meters
                                      .find("dlock.leases.lost")
                                      .tags("lock", LockNamePatterns.OTHER, "reason", "expired")
                                      .counters())
                              .singleElement()
                              .satisfies(c -> assertThat(c.count()).isEqualTo(1.0));
                        });
                assertThat(lease.isValid()).isFalse();
              });
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnClient {
    LockClient client;

    /** The application's own client, which the starter cannot equip: it sets the listener. */
    @Bean(destroyMethod = "close")
    LockClient lockClient(MicrometerLockMetrics dlockLockMetrics) {
      client =
          LockClients.connect(
              TestRedis.uri(),
              Map.of(),
              LockClientOptions.defaults().withEventListener(dlockLockMetrics));
      return client;
    }
  }

  /** A listener that fails, and one that records: the first must not keep the second deaf. */
  @Configuration(proxyBeanMethods = false)
  static class Listeners {
    final List<String> acquired = new CopyOnWriteArrayList<>();

    @Bean
    @org.springframework.core.annotation.Order(1)
    LockEventListener failingListener() {
      return new LockEventListener() {
        @Override
        public void acquired(String lockName, long token, Duration latency, Duration waited) {
          throw new IllegalStateException("a broken listener");
        }
      };
    }

    @Bean
    @org.springframework.core.annotation.Order(2)
    LockEventListener recordingListener() {
      return new LockEventListener() {
        @Override
        public void acquired(String lockName, long token, Duration latency, Duration waited) {
          acquired.add(lockName);
        }
      };
    }
  }

  /** No registry: the one of the Actuator's auto-configuration. */
  @Configuration(proxyBeanMethods = false)
  static class WorkOnly {
    @Bean
    Work work() {
      return new Work();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    @Bean
    Work work() {
      return new Work();
    }
  }

  /** Locked methods with one name pattern and many keys. */
  public static class Work {
    @Locked(name = "work", key = "#key", waitTime = "10s")
    public void run(String key) {}

    @Locked(name = "work", key = "#key", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public boolean runOrSkip(String key) {
      return true;
    }

    @Locked(name = "work", key = "#key", waitTime = "10s")
    public void holdUntil(String key, CountDownLatch entered, CountDownLatch leave)
        throws InterruptedException {
      entered.countDown();
      assertThat(leave.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Locked(name = "work", key = "#key", leaseTime = "300ms")
    public void holdWhileBroken(String key, LockClient client, String lockName) {
      assertThat(client.forceRelease(lockName)).isPresent();
      Lease lease = LockedMethodContext.currentLease().orElseThrow();
      // The next renewal (a third of the lease) finds the lock gone.
      await().atMost(TestTiming.scaled(Duration.ofSeconds(5))).until(() -> !lease.isValid());
    }
  }
}
