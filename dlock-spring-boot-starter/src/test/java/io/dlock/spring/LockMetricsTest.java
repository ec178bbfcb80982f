package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The metrics after a known sequence of acquisitions, on a real Redis server. */
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
    @DistributedLock(name = "work", key = "#key", waitTime = "10s")
    public void run(String key) {}

    @DistributedLock(name = "work", key = "#key", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public boolean runOrSkip(String key) {
      return true;
    }

    @DistributedLock(name = "work", key = "#key", waitTime = "10s")
    public void holdUntil(String key, CountDownLatch entered, CountDownLatch leave)
        throws InterruptedException {
      entered.countDown();
      assertThat(leave.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @DistributedLock(name = "work", key = "#key", leaseTime = "300ms")
    public void holdWhileBroken(String key, LockClient client, String lockName) {
      assertThat(client.forceRelease(lockName)).isPresent();
      Lease lease = DistributedLockContext.currentLease().orElseThrow();
      // The next renewal (a third of the lease) finds the lock gone.
      await().atMost(TestTiming.scaled(Duration.ofSeconds(5))).until(() -> !lease.isValid());
    }
  }
}
