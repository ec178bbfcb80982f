package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.shedlock.DlockLockProvider;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The ShedLock adapter, through the cases of ShedLock's own provider test suite ({@code
 * AbstractLockProviderIntegrationTest}: create, no second lock, re-create after release,
 * lockAtLeastFor, lockAtMostFor timeout, unlock twice) and its {@code LockingTaskExecutor} under
 * concurrent jobs (what its {@code FuzzTester} checks). "Locked" is checked from another client.
 */
class ShedLockProviderTest {
  private static final String PREFIX = "shedlock-" + UUID.randomUUID() + ":";
  private static LockClient client;
  private static LockClient observer;
  private static DlockLockProvider provider;

  @BeforeAll
  static void connect() {
    client = LockClients.connect(TestRedis.uri());
    observer = LockClients.connect(TestRedis.uri());
    provider = new DlockLockProvider(new LockAcquirer(client, new LockNamePatterns(PREFIX)));
  }

  @AfterAll
  static void close() {
    provider.close();
    client.close();
    observer.close();
  }

  @Test
  void theStarterDefinesTheProvider() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DlockAutoConfiguration.class))
        .withPropertyValues("dlock.backend=" + TestRedis.uri())
        .run(
            context ->
                assertThat(context)
                    .getBean(LockProvider.class)
                    .isInstanceOf(DlockLockProvider.class));
  }

  @Test
  void shouldCreateLock() {
    String name = name();
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
    assertThat(lock).isPresent();
    assertLocked(name);
    lock.get().unlock();
    assertUnlocked(name);
  }

  @Test
  void shouldNotReturnSecondLockEvenOnTheSameThread() {
    String name = name();
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
    assertThat(lock).isPresent();
    assertThat(provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
    lock.get().unlock();
  }

  @Test
  void shouldCreateLockIfReleased() {
    String name = name();
    provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
    Optional<SimpleLock> again = provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
    assertThat(again).isPresent();
    again.get().unlock();
    assertUnlocked(name);
  }

  @Test
  void shouldLockAtLeastFor() {
    String name = name();
    Duration atLeast = TestTiming.millis(500);
    LockConfiguration config = config(name, Duration.ofSeconds(30), atLeast);
    provider.lock(config).orElseThrow().unlock();
    // Unlocked early: still held until lockAtLeastFor ends.
    assertLocked(name);
    assertThat(provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
    await().atMost(TestTiming.scaled(Duration.ofSeconds(5))).until(() -> isUnlocked(name));
    assertThat(Instant.now()).isAfterOrEqualTo(config.getLockAtLeastUntil());
  }

  @Test
  void unlockedBeforeLockAtLeastForTheServerKeepsTheLockOnlyAboutThatLong() {
    // The release at the end of lockAtLeastFor is this process's timer: should the process die,
    // the server's lease must not outlast lockAtLeastFor by more than the slack, whatever
    // lockAtMostFor says.
    String name = name();
    provider
        .lock(config(name, Duration.ofSeconds(30), Duration.ofSeconds(2)))
        .orElseThrow()
        .unlock();

    LockInfo info = observer.inspect(PREFIX + name).get(0);
    // lockAtLeastFor, the slack and what the client takes off for drift: about 3 s, not 30.
    assertThat(info.leaseRemaining()).isNotNull().isLessThanOrEqualTo(Duration.ofMillis(3500));
    await().atMost(TestTiming.scaled(Duration.ofSeconds(10))).until(() -> isUnlocked(name));
  }

  /**
   * Regression (issue 29, finding 7): a graceful shutdown (the provider, then its client, closed)
   * released a lock unlocked before its lockAtLeastFor at once, although it is to be kept until
   * then: another instance ran the job again during a deploy. It is now left on the server, whose
   * lease ends at about lockAtLeastFor.
   */
  @Test
  void aGracefulShutdownKeepsALockUnlockedEarlyUntilLockAtLeastFor() {
    String name = name();
    LockClient shuttingDown = LockClients.connect(TestRedis.uri());
    DlockLockProvider instance =
        new DlockLockProvider(new LockAcquirer(shuttingDown, new LockNamePatterns(PREFIX)));
    LockConfiguration config = config(name, Duration.ofSeconds(30), TestTiming.millis(1500));
    instance.lock(config).orElseThrow().unlock();

    instance.close();
    shuttingDown.close();

    assertLocked(name);
    assertThat(provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)))
        .as("another instance cannot run the job yet")
        .isEmpty();
    await().atMost(TestTiming.scaled(Duration.ofSeconds(10))).until(() -> isUnlocked(name));
    assertThat(Instant.now()).isAfterOrEqualTo(config.getLockAtLeastUntil());
  }

  @Test
  void anExtendedLockOutlivesItsFirstLockAtMostFor() {
    String name = name();
    SimpleLock lock =
        provider.lock(config(name, TestTiming.millis(600), Duration.ZERO)).orElseThrow();

    Optional<SimpleLock> extended = lock.extend(TestTiming.millis(6000), Duration.ZERO);

    assertThat(extended).isPresent();
    await()
        .during(TestTiming.millis(1500))
        .atMost(TestTiming.millis(4000))
        .until(() -> !isUnlocked(name));
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class); // the old object
    extended.get().unlock();
    assertUnlocked(name);
  }

  @Test
  void aLockWhoseLockAtMostForPassedIsNotExtended() {
    String name = name();
    SimpleLock lock =
        provider.lock(config(name, Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
    await().atMost(TestTiming.scaled(Duration.ofSeconds(5))).until(() -> isUnlocked(name));

    assertThat(lock.extend(Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
    assertThat(lock.extend(Duration.ofMillis(10), Duration.ZERO)).isEmpty();
    assertUnlocked(name);
  }

  @Test
  void shouldTimeoutAfterLockAtMostFor() {
    String name = name();
    Optional<SimpleLock> stuck = provider.lock(config(name, Duration.ofMillis(300), Duration.ZERO));
    assertThat(stuck).isPresent();
    // The holder never unlocks (a stuck job): the lock ends after lockAtMostFor anyway.
    await()
        .atMost(TestTiming.scaled(Duration.ofSeconds(5)))
        .until(
            () -> provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).isPresent());
  }

  @Test
  void unlockTwiceFails() {
    SimpleLock lock =
        provider.lock(config(name(), Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    lock.unlock();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void lockingTaskExecutorRunsEachJobOnOneThreadAtATime() throws Exception {
    LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
    String name = name();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger runs = new AtomicInteger();
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < 25; i++) {
                    executor.executeWithLock(
                        (Runnable)
                            () -> {
                              LockAssert.assertLocked();
                              if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                              }
                              runs.incrementAndGet();
                              Thread.yield(); // a job that takes a little time
                              inside.decrementAndGet();
                            },
                        config(name, Duration.ofSeconds(30), Duration.ZERO));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(TestTiming.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(overlaps).hasValue(0);
    assertThat(runs.get()).isPositive();
    assertUnlocked(name);
  }

  private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
  }

  private static String name() {
    return "job-" + UUID.randomUUID();
  }

  private static boolean isUnlocked(String name) {
    Optional<Lease> lease = observer.lock(PREFIX + name).tryAcquire();
    lease.ifPresent(Lease::release);
    return lease.isPresent();
  }

  private static void assertLocked(String name) {
    assertThat(isUnlocked(name)).as("'%s' is locked", name).isFalse();
  }

  private static void assertUnlocked(String name) {
    assertThat(isUnlocked(name)).as("'%s' is unlocked", name).isTrue();
  }
}
