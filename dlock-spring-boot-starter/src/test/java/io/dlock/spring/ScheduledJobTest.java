package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Scheduled jobs with {@code @Locked(waitTime = "0", onFailure = SKIP, holdAtLeast, onLeaseLost =
 * INTERRUPT)}: three application contexts stand for three instances of one service on one Redis.
 */
class ScheduledJobTest {
  private static final String PREFIX = "jobs-" + UUID.randomUUID() + ":";
  private static final Duration HOLD = TestTiming.millis(1500);

  /** Every run of the jobs, whichever context ran it: the context's id and the fencing token. */
  static final List<String> runs = new CopyOnWriteArrayList<>();

  static final List<long[]> scheduledRuns = new CopyOnWriteArrayList<>();

  private static LockClient admin;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
          .withPropertyValues(
              "dlock.backend=" + TestRedis.uri(),
              "dlock.key-prefix=" + PREFIX,
              "jobs.hold=" + HOLD.toMillis() + "ms")
          .withUserConfiguration(Jobs.class);

  @BeforeAll
  static void connect() {
    admin = LockClients.connect(TestRedis.uri());
  }

  @AfterAll
  static void close() {
    admin.close();
  }

  @Test
  void aJobFiredOnThreeInstancesAtOnceRunsOnOneAndALateInstanceSkipsIt() throws Exception {
    runner.run(
        a ->
            runner.run(
                b ->
                    runner.run(
                        c -> {
                          List<ApplicationContext> instances = List.of(a, b, c);
                          runs.clear();
                          fireTogether(instances);
                          assertThat(runs).hasSize(1);

                          // An instance whose scheduler fires a little later: the job is done,
                          // but the lock is held for holdAtLeast, so it skips.
                          assertThat(c.getBean(Job.class).report(0)).isFalse();
                          assertThat(a.getBean(Job.class).report(0)).isFalse();
                          assertThat(runs).hasSize(1);

                          // The next period: one instance runs again, with a newer token.
                          await()
                              .atMost(HOLD.multipliedBy(4))
                              .until(() -> b.getBean(Job.class).report(0));
                          assertThat(runs).hasSize(2);
                          assertThat(token(runs.get(1))).isGreaterThan(token(runs.get(0)));
                        })));
  }

  /**
   * A graceful shutdown (the application context closed) leaves a lock whose holdAtLeast has not
   * passed held on the server until about then (its lease shortened to end then), instead of
   * releasing it with the lock client: another instance must not run the job again during a deploy.
   * (It did: found when {@link #scheduledOnThreeInstancesTheJobNeverRunsTwiceWithinItsHold} failed
   * under load, an instance shutting down freeing the lock for the next one's scheduler.)
   */
  @Test
  void aGracefulShutdownKeepsTheLockUntilItsHoldHasPassed() {
    String name = PREFIX + "report";
    await()
        .atMost(HOLD.multipliedBy(4))
        .until(() -> admin.lock(name).tryAcquire().map(Lease::release).orElse(false));
    long[] calledAt = new long[1];
    runner.run(
        a -> {
          calledAt[0] = System.nanoTime(); // before the grant: the hold counts from after it
          assertThat(a.getBean(Job.class).report(0)).isTrue();
        }); // the context closes here, holdAtLeast far from over

    assertThat(admin.lock(name).tryAcquire()).as("held after the shutdown").isEmpty();
    await()
        .atMost(HOLD.multipliedBy(4))
        .until(() -> admin.lock(name).tryAcquire().map(Lease::release).orElse(false));
    assertThat(System.nanoTime() - calledAt[0])
        .as("freed no sooner than holdAtLeast after the grant")
        .isGreaterThanOrEqualTo(HOLD.toNanos());
  }

  /**
   * A hold longer than the method's renewed lease is kept for the whole hold (found by review: the
   * release was capped by the lease's remaining time, as for ShedLock's fixed leases).
   */
  @Test
  void aHoldLongerThanItsRenewedLeaseIsKeptWholly() {
    String name = PREFIX + "long-hold";
    runner.run(
        a -> {
          long calledAt = System.nanoTime();
          assertThat(a.getBean(Job.class).longHold()).isTrue();
          await()
              .atMost(HOLD.multipliedBy(4))
              .until(() -> admin.lock(name).tryAcquire().map(Lease::release).orElse(false));
          assertThat(System.nanoTime() - calledAt)
              .as("freed no sooner than holdAtLeast after the grant")
              .isGreaterThanOrEqualTo(HOLD.toNanos());
        });
  }

  @Test
  void scheduledOnThreeInstancesTheJobNeverRunsTwiceWithinItsHold() {
    scheduledRuns.clear();
    runner
        .withUserConfiguration(Scheduling.class)
        .run(
            a ->
                runner
                    .withUserConfiguration(Scheduling.class)
                    .run(
                        b ->
                            runner
                                .withUserConfiguration(Scheduling.class)
                                .run(
                                    c ->
                                        await()
                                            .atMost(HOLD.multipliedBy(8))
                                            .until(() -> scheduledRuns.size() >= 3))));
    // Each instance's scheduler fires every 100 ms; only one run per hold, with rising tokens.
    List<long[]> seen = new ArrayList<>(scheduledRuns);
    for (int i = 1; i < seen.size(); i++) {
      assertThat(seen.get(i)[0] - seen.get(i - 1)[0])
          .as("nanoseconds between run %d and the one before", i)
          .isGreaterThanOrEqualTo(HOLD.toNanos() - 5_000_000L); // recorded just after the grant
      assertThat(seen.get(i)[1]).isGreaterThan(seen.get(i - 1)[1]);
    }
  }

  @Test
  void aJobWhoseLeaseIsDeletedBehindItsBackIsInterruptedAndItsThreadLeftClean() {
    runner.run(
        context -> {
          Job job = context.getBean(Job.class);
          CompletableFuture<String> outcome =
              CompletableFuture.supplyAsync(
                  () -> {
                    String result = job.waitUntilInterrupted(0);
                    return result + (Thread.currentThread().isInterrupted() ? ", flag set" : "");
                  });
          assertThat(Job.started.await(10, TimeUnit.SECONDS)).isTrue();

          admin.forceRelease(PREFIX + "stuck"); // an operator breaks the lock

          assertThat(
                  outcome.get(
                      TestTiming.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
              .isEqualTo("interrupted");
        });
  }

  /** Calls the job on every instance at the same instant, as their schedulers would. */
  private static void fireTogether(List<ApplicationContext> instances) throws Exception {
    CyclicBarrier together = new CyclicBarrier(instances.size());
    List<CompletableFuture<Boolean>> calls = new ArrayList<>();
    for (ApplicationContext instance : instances) {
      Job job = instance.getBean(Job.class);
      calls.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  together.await();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
                return job.report(0);
              }));
    }
    int ran = 0;
    for (CompletableFuture<Boolean> call : calls) {
      ran += call.get(30, TimeUnit.SECONDS) ? 1 : 0;
    }
    assertThat(ran).as("instances that ran the job").isEqualTo(1);
  }

  private static long token(String run) {
    return Long.parseLong(run.substring(run.indexOf(':') + 1));
  }

  @Configuration(proxyBeanMethods = false)
  static class Jobs {
    @Bean
    Job job() {
      return new Job();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class Scheduling {
    @Bean
    ScheduledReport scheduledReport() {
      return new ScheduledReport();
    }
  }

  /** A job bean, one per instance. */
  public static class Job {
    /** Static: the bean is a class proxy, whose own fields the test would read otherwise. */
    static final CountDownLatch started = new CountDownLatch(1);

    private final String instance = UUID.randomUUID().toString().substring(0, 8);

    /** Returns true if it ran; false (by the SKIP rule) where another instance holds the lock. */
    @Locked(
        name = "report",
        waitTime = "0",
        onFailure = OnLockFailure.SKIP,
        holdAtLeast = "${jobs.hold}")
    public boolean report(@FencingToken long token) {
      runs.add(instance + ":" + token);
      return true;
    }

    /** A hold longer than its (renewed) lease. */
    @Locked(
        name = "long-hold",
        waitTime = "0",
        leaseTime = "600ms",
        onFailure = OnLockFailure.SKIP,
        holdAtLeast = "${jobs.hold}")
    public boolean longHold() {
      return true;
    }

    @Locked(
        name = "stuck",
        waitTime = "0",
        leaseTime = "600ms",
        onFailure = OnLockFailure.SKIP,
        onLeaseLost = OnLeaseLost.INTERRUPT)
    public String waitUntilInterrupted(@FencingToken long token) {
      started.countDown();
      try {
        new CountDownLatch(1).await(); // a job that blocks until it is stopped
        return "not interrupted";
      } catch (InterruptedException e) {
        return "interrupted";
      }
    }
  }

  /** The same job under Spring's scheduler, firing every 100 ms on each instance. */
  public static class ScheduledReport {
    @Scheduled(fixedRate = 100) // scheduled methods take no arguments: the token from the context
    @Locked(
        name = "scheduled-report",
        waitTime = "0",
        onFailure = OnLockFailure.SKIP,
        holdAtLeast = "${jobs.hold}")
    public void run() {
      scheduledRuns.add(new long[] {System.nanoTime(), LockedMethodContext.currentFencingToken()});
    }
  }
}
