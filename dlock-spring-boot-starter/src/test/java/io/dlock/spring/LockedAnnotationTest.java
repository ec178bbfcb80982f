package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockException;
import io.dlock.LockTimeoutException;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code @Locked} in a real application context, on a real Redis server. */
class LockedAnnotationTest {
  private static final String PREFIX = "annotation-" + UUID.randomUUID() + ":";
  private static LockClient otherProcess;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
          .withPropertyValues("dlock.backend=" + TestRedis.uri(), "dlock.key-prefix=" + PREFIX)
          .withUserConfiguration(Beans.class);

  @BeforeAll
  static void connectOtherProcess() {
    // Another "process": a second client whose holds conflict with the application's.
    otherProcess = LockClients.connect(TestRedis.uri());
  }

  @AfterAll
  static void closeOtherProcess() {
    otherProcess.close();
  }

  @Test
  void eightConcurrentCallersLoseNoUpdateAndKeysAreSeparateLocks() {
    runner.run(
        context -> {
          Ledger ledger = context.getBean(Ledger.class);
          int threads = 8;
          int callsPerThread = 40;
          ExecutorService pool = Executors.newFixedThreadPool(threads);
          try {
            List<Future<?>> futures = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            for (int t = 0; t < threads; t++) {
              futures.add(
                  pool.submit(
                      () -> {
                        start.await();
                        for (int i = 0; i < callsPerThread; i++) {
                          ledger.add(new Account(i % 2 == 0 ? "alice" : "bob"), 1);
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
          assertThat(ledger.balance("alice")).isEqualTo(threads * callsPerThread / 2);
          assertThat(ledger.balance("bob")).isEqualTo(threads * callsPerThread / 2);
          assertThat(ledger.maxInside()).isEqualTo(1);
          // The key is part of the name: the SpEL #account.id gave two different locks.
          assertThat(ledger.lockNames())
              .containsExactlyInAnyOrder(PREFIX + "ledger:alice", PREFIX + "ledger:bob");
        });
  }

  @Test
  void theMethodSeesItsFencingTokenAndTokensIncrease() {
    runner.run(
        context -> {
          Jobs jobs = context.getBean(Jobs.class);
          long[] first = jobs.tokens("fencing", 0L);
          long[] second = jobs.tokens("fencing", 0L);
          assertThat(first[0]).isEqualTo(first[1]).isPositive();
          assertThat(second[0]).isEqualTo(second[1]).isGreaterThan(first[0]);
          assertThatThrownBy(LockedMethodContext::currentFencingToken)
              .isInstanceOf(IllegalStateException.class)
              .hasMessageContaining("no @Locked method");
        });
  }

  @Test
  void onFailureThrowSkipAndFallbackWhenAnotherProcessHoldsTheLock() {
    runner.run(
        context -> {
          Jobs jobs = context.getBean(Jobs.class);
          try (Lease held = otherProcess.lock(PREFIX + "job:42").acquire(Duration.ZERO)) {
            assertThatThrownBy(() -> jobs.runOrThrow("42"))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining(PREFIX + "job:42");
            assertThat(jobs.runOrSkip("42")).isNull();
            assertThat(jobs.countOrSkip("42")).isZero();
            assertThat(jobs.maybeOrSkip("42")).isEmpty();
            assertThat(jobs.runOrFallback("42")).isEqualTo("busy 42: LockTimeoutException");
            assertThat(jobs.ran()).isEmpty();
          }
          // Once released, every strategy runs the method.
          assertThat(jobs.runOrThrow("42")).isEqualTo("ran 42");
          assertThat(jobs.runOrSkip("42")).isEqualTo("ran 42");
          assertThat(jobs.runOrFallback("42")).isEqualTo("ran 42");
          assertThat(jobs.ran()).hasSize(3);
        });
  }

  @Test
  void aWaitingCallerGetsTheLockWhenTheOtherHolderReleases() {
    runner.run(
        context -> {
          Jobs jobs = context.getBean(Jobs.class);
          Lease held = otherProcess.lock(PREFIX + "job:7").acquire(Duration.ZERO);
          ExecutorService pool = Executors.newSingleThreadExecutor();
          try {
            Future<String> waiting = pool.submit(() -> jobs.runWaiting("7"));
            // Not before the release: the caller is still waiting.
            assertThat(waiting).isNotDone();
            held.release();
            assertThat(
                    waiting.get(
                        TestTiming.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .isEqualTo("ran 7");
          } finally {
            pool.shutdownNow();
          }
        });
  }

  @Test
  void aKeyThatEvaluatesToNullFailsNamingTheMethodAndTheExpression() {
    runner.run(
        context -> {
          Ledger ledger = context.getBean(Ledger.class);
          assertThatThrownBy(() -> ledger.add(new Account(null), 1))
              .isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("'#account.id'")
              .hasMessageContaining("Ledger.add(Account, long)")
              .hasMessageContaining("null");
        });
  }

  @Test
  void anUnknownVariableInTheKeyFailsTheStartUp() {
    runner
        .withUserConfiguration(BadVariable.class)
        .run(
            context ->
                assertThat(startUpFailure(context))
                    .hasMessageContaining("BadVariableService.buy(String)")
                    .hasMessageContaining("'#skuu'")
                    .hasMessageContaining("known: #sku"));
  }

  @Test
  void invalidSpelFailsTheStartUp() {
    runner
        .withUserConfiguration(BadSyntax.class)
        .run(
            context ->
                assertThat(startUpFailure(context))
                    .hasMessageStartingWith("@Locked on BadSyntaxService.buy(String): ")
                    .hasMessageContaining("BadSyntaxService.buy(String)")
                    .hasMessageContaining("'#sku +'"));
  }

  @Test
  void aMissingFallbackMethodFailsTheStartUp() {
    runner
        .withUserConfiguration(MissingFallback.class)
        .run(
            context ->
                assertThat(startUpFailure(context))
                    .hasMessageContaining("MissingFallbackService.buy(String)")
                    .hasMessageContaining("fallback method 'nowhere' not found"));
  }

  @Test
  void withoutABackendTheStartUpFailsSayingWhatToSet() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
        .withUserConfiguration(Beans.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("dlock has no backend: set dlock.backend"));
  }

  /** The exception of ours in the chain that failed the start-up. */
  static Throwable startUpFailure(
      org.springframework.boot.test.context.assertj.AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().startsWith("@Locked on ")) {
        return t;
      }
    }
    throw new AssertionError("no @Locked failure in", context.getStartupFailure());
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Ledger ledger() {
      return new Ledger();
    }

    @Bean
    Jobs jobs() {
      return new Jobs();
    }
  }

  /** An account, the argument the key is taken from. */
  public record Account(String id) {}

  /** A balance kept with a read-modify-write that only the lock makes safe. */
  public static class Ledger {
    final Map<String, AtomicLong> balances = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> insideByKey = new ConcurrentHashMap<>();
    final AtomicInteger maxInside = new AtomicInteger();
    final java.util.Set<String> lockNames = ConcurrentHashMap.newKeySet();

    @Locked(name = "ledger", key = "#account.id", waitTime = "30s")
    public void add(Account account, long amount) {
      lockNames.add(LockedMethodContext.currentLease().orElseThrow().lockName());
      AtomicInteger inside = insideByKey.computeIfAbsent(account.id(), k -> new AtomicInteger());
      int now = inside.incrementAndGet();
      maxInside.accumulateAndGet(now, Math::max);
      try {
        AtomicLong cell = balances.computeIfAbsent(account.id(), k -> new AtomicLong());
        long before = cell.get();
        Thread.yield(); // widens the read-modify-write window, as a real read from a store would
        cell.set(before + amount);
      } finally {
        inside.decrementAndGet();
      }
    }

    public long balance(String id) {
      return balances.get(id).get();
    }

    public int maxInside() {
      return maxInside.get();
    }

    public java.util.Set<String> lockNames() {
      return lockNames;
    }
  }

  /** Jobs that exercise the failure strategies and the fencing token. */
  public static class Jobs {
    final List<String> ran = new CopyOnWriteArrayList<>();

    @Locked(name = "job", key = "#id", waitTime = "0")
    public String runOrThrow(String id) {
      return run(id);
    }

    @Locked(name = "job", key = "#id", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public String runOrSkip(String id) {
      return run(id);
    }

    @Locked(name = "job", key = "#p0", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public int countOrSkip(String id) {
      run(id);
      return 1;
    }

    @Locked(name = "job", key = "#a0", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public Optional<String> maybeOrSkip(String id) {
      return Optional.of(run(id));
    }

    @Locked(
        name = "job",
        key = "#id",
        waitTime = "0",
        onFailure = OnLockFailure.FALLBACK,
        fallback = "busy")
    public String runOrFallback(String id) {
      return run(id);
    }

    public List<String> ran() {
      return ran;
    }

    String busy(String id, LockException failure) {
      return "busy " + id + ": " + failure.getClass().getSimpleName();
    }

    @Locked(name = "job", key = "#id", waitTime = "${test.wait:30s}")
    public String runWaiting(String id) {
      return run(id);
    }

    @Locked(name = "tokens", key = "#id")
    public long[] tokens(String id, @FencingToken long token) {
      return new long[] {token, LockedMethodContext.currentFencingToken()};
    }

    private String run(String id) {
      ran.add(id);
      return "ran " + id;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BadVariable {
    @Bean
    BadVariableService badVariableService() {
      return new BadVariableService();
    }
  }

  /** A typo in the key. */
  public static class BadVariableService {
    @Locked(name = "stock", key = "#skuu")
    public void buy(String sku) {}
  }

  @Configuration(proxyBeanMethods = false)
  static class BadSyntax {
    @Bean
    BadSyntaxService badSyntaxService() {
      return new BadSyntaxService();
    }
  }

  /** A key that is not SpEL. */
  public static class BadSyntaxService {
    @Locked(name = "stock", key = "#sku +")
    public void buy(String sku) {}
  }

  @Configuration(proxyBeanMethods = false)
  static class MissingFallback {
    @Bean
    MissingFallbackService missingFallbackService() {
      return new MissingFallbackService();
    }
  }

  /** A fallback that does not exist. */
  public static class MissingFallbackService {
    @Locked(name = "stock", key = "#sku", onFailure = OnLockFailure.FALLBACK, fallback = "nowhere")
    public void buy(String sku) {}
  }
}
