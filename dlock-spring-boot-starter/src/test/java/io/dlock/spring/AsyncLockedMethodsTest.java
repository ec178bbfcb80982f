package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockLostException;
import io.dlock.LockTimeoutException;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code @Locked} on methods returning {@code CompletableFuture}, {@code Mono} and {@code Flux}:
 * the lock is held until the returned work is done, not only until the method returns, on a real
 * Redis server.
 */
class AsyncLockedMethodsTest {
  private static final String PREFIX = "async-" + UUID.randomUUID() + ":";
  private static final Duration BOUND = TestTiming.scaled(Duration.ofSeconds(30));
  private static LockClient otherProcess;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
          .withPropertyValues("dlock.backend=" + TestRedis.uri(), "dlock.key-prefix=" + PREFIX)
          .withUserConfiguration(Beans.class);

  @BeforeAll
  static void connectOtherProcess() {
    otherProcess = LockClients.connect(TestRedis.uri());
  }

  @AfterAll
  static void closeOtherProcess() {
    otherProcess.close();
  }

  /** Whether another process could take the lock now (and gives it back at once). */
  private static boolean isFree(String name) {
    Optional<Lease> lease = otherProcess.lock(PREFIX + name).tryAcquire();
    lease.ifPresent(Lease::release);
    return lease.isPresent();
  }

  @Test
  void aFutureHoldsItsLockUntilItCompletesAndTheSameThreadDoesNotReEnter() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          CompletableFuture<Void> gate = new CompletableFuture<>();
          CompletableFuture<Long> first = stock.reserve("sku-1", gate, 0);

          assertThat(first).isNotDone();
          assertThat(isFree("stock:sku-1")).isFalse();
          // The same thread's next call is a grant of its own, so it finds the lock held.
          CompletableFuture<Long> second = stock.reserve("sku-1", new CompletableFuture<>(), 0);
          assertThatThrownBy(() -> second.get(BOUND.toMillis(), TimeUnit.MILLISECONDS))
              .isInstanceOf(ExecutionException.class)
              .hasCauseInstanceOf(LockTimeoutException.class);

          gate.complete(null);
          long token = first.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
          assertThat(token).isPositive(); // the grant's token reached the method
          // The caller's future completes only after the release.
          assertThat(isFree("stock:sku-1")).isTrue();
        });
  }

  @Test
  void cancellingTheCallersFutureDoesNotEndTheHoldWhileTheWorkRuns() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          CompletableFuture<Void> gate = new CompletableFuture<>();
          CompletableFuture<Long> call = stock.reserve("sku-c", gate, 0);
          // Cancelling a CompletableFuture stops none of the work behind it: the lock stays.
          call.cancel(true);
          assertThat(isFree("stock:sku-c")).isFalse();
          gate.complete(null); // the work ends
          await(() -> isFree("stock:sku-c"));
        });
  }

  @Test
  void subscriptionsCancelledAtRandomMomentsLeaveNoLockHeld() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          int calls = 200;
          for (int i = 0; i < calls; i++) {
            Disposable subscription = stock.never("k" + i).subscribe();
            // Cancel anywhere between the request, the grant, the hand-over and the work.
            long until = System.nanoTime() + ThreadLocalRandom.current().nextLong(3_000_000);
            while (System.nanoTime() < until) {
              Thread.onSpinWait();
            }
            subscription.dispose();
          }
          // A dropped grant would be renewed for as long as the client runs.
          await(
              () -> {
                for (int i = 0; i < calls; i++) {
                  if (!isFree("never:k" + i)) {
                    return false;
                  }
                }
                return true;
              });
        });
  }

  @Test
  void concurrentFuturesLoseNoUpdate() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          List<CompletableFuture<Long>> calls = new ArrayList<>();
          ExecutorService callers = Executors.newFixedThreadPool(4);
          try {
            for (int i = 0; i < 40; i++) {
              calls.add(
                  CompletableFuture.supplyAsync(() -> stock.incrementLater("counter"), callers)
                      .thenCompose(future -> future));
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
                .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
          } finally {
            callers.shutdownNow();
          }
          // Each increment reads, hands off to another thread, then writes: only a lock held
          // until the future completes keeps them apart.
          assertThat(stock.count()).isEqualTo(40);
        });
  }

  @Test
  void aMonoTakesItsLockAtSubscriptionAndReleasesItAtTheEnd() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          Sinks.One<String> answer = Sinks.one();
          Mono<String> call = stock.lookup("sku-2", answer.asMono(), 0);
          assertThat(isFree("lookup:sku-2")).as("not held before subscription").isTrue();

          CompletableFuture<String> result = call.toFuture();
          await(() -> !isFree("lookup:sku-2"));
          answer.tryEmitValue("found");
          assertThat(result.get(BOUND.toMillis(), TimeUnit.MILLISECONDS)).startsWith("found:");
          long token = Long.parseLong(result.get().substring("found:".length()));
          assertThat(token).isPositive();
          await(() -> isFree("lookup:sku-2"));

          // Each subscription is a grant of its own, with a newer token.
          Mono<String> again = stock.lookup("sku-2", Mono.just("again"), 0);
          String second = again.block(BOUND);
          assertThat(Long.parseLong(second.substring("again:".length()))).isGreaterThan(token);
        });
  }

  @Test
  void concurrentFluxSubscriptionsLoseNoUpdateAndCancellingReleases() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          List<Mono<List<Long>>> all = new ArrayList<>();
          for (int i = 0; i < 20; i++) {
            all.add(stock.incrementTwice("flux-counter").collectList());
          }
          Flux.merge(all).blockLast(BOUND);
          assertThat(stock.count()).isEqualTo(40);

          // A subscription cancelled while it holds the lock gives it back.
          Disposable endless = stock.ticks("endless").subscribe();
          await(() -> !isFree("ticks:endless"));
          endless.dispose();
          await(() -> isFree("ticks:endless"));
        });
  }

  @Test
  void aPublisherThatCannotHaveItsLockFailsOrIsEmpty() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          Lease held = otherProcess.lock(PREFIX + "lookup:busy").acquire(BOUND);
          try {
            assertThatThrownBy(() -> stock.lookup("busy", Mono.just("x"), 0).block(BOUND))
                .isInstanceOf(LockTimeoutException.class);
            assertThat(stock.lookupOrSkip("busy").blockOptional(BOUND)).isEmpty();
          } finally {
            held.release();
          }
          assertThat(stock.lookupOrSkip("busy").block(BOUND)).isEqualTo("ran");
        });
  }

  @Test
  void aFluxWhoseLeaseIsDeletedBehindItsBackIsCancelledWithLockLost() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          CompletableFuture<List<Long>> outcome = stock.guardedTicks().collectList().toFuture();
          await(() -> !otherProcess.inspect(PREFIX + "guarded").isEmpty());

          otherProcess.forceRelease(PREFIX + "guarded"); // an operator breaks the lock

          assertThatThrownBy(() -> outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS))
              .isInstanceOf(ExecutionException.class)
              .hasCauseInstanceOf(LockLostException.class);
        });
  }

  /**
   * Regression (issue 29, left open by the last notes): a context that closed under a running
   * publisher released its lease without a word, and the work ran on unlocked.
   */
  @Test
  void aFluxStillRunningWhenTheContextClosesIsCancelledWithLockLost() {
    runner.run(
        context -> {
          Stock stock = context.getBean(Stock.class);
          CompletableFuture<List<Long>> outcome = stock.guardedTicks().collectList().toFuture();
          await(() -> !otherProcess.inspect(PREFIX + "guarded").isEmpty());

          context.close(); // the application shuts down while the work runs

          assertThatThrownBy(() -> outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS))
              .isInstanceOf(ExecutionException.class)
              .hasCauseInstanceOf(LockLostException.class);
          assertThat(isFree("guarded")).as("released at close").isTrue();
        });
  }

  @Test
  void interruptOnAMethodReturningAFutureFailsTheStartUp() {
    runner
        .withUserConfiguration(InterruptedFuture.class)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("onLeaseLost = INTERRUPT")
                    .hasMessageContaining("CompletableFuture"));
  }

  private static void await(java.util.concurrent.Callable<Boolean> condition) {
    org.awaitility.Awaitility.await().atMost(BOUND).until(condition);
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Stock stock() {
      return new Stock();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class InterruptedFuture {
    @Bean
    Interrupted interrupted() {
      return new Interrupted();
    }
  }

  public static class Interrupted {
    @Locked(name = "interrupted", onLeaseLost = OnLeaseLost.INTERRUPT)
    public CompletableFuture<Void> run() {
      return CompletableFuture.completedFuture(null);
    }
  }

  public static class Stock {
    private final AtomicLong count = new AtomicLong();
    private final ExecutorService workers = Executors.newCachedThreadPool();

    /** Read through a method: the caller holds the proxy, whose own fields are not the bean's. */
    public long count() {
      return count.get();
    }

    @Locked(name = "stock", key = "#sku", waitTime = "0")
    public CompletableFuture<Long> reserve(
        String sku, CompletableFuture<Void> gate, @FencingToken long token) {
      return gate.thenApply(done -> token);
    }

    /** A read, then the write on another thread: a lost update unless the lock spans both. */
    @Locked(name = "increment", key = "#name", waitTime = "30s")
    public CompletableFuture<Long> incrementLater(String name) {
      long read = count.get();
      return CompletableFuture.supplyAsync(
          () -> {
            Thread.yield();
            count.set(read + 1);
            return read + 1;
          },
          workers);
    }

    @Locked(name = "lookup", key = "#sku", waitTime = "0")
    public Mono<String> lookup(String sku, Mono<String> answer, @FencingToken long token) {
      return answer.map(value -> value + ":" + token);
    }

    @Locked(name = "lookup", key = "'busy'", waitTime = "0", onFailure = OnLockFailure.SKIP)
    public Mono<String> lookupOrSkip(String sku) {
      return Mono.just("ran");
    }

    /** Two read-modify-writes separated by a hop to a timer thread. */
    @Locked(name = "increment", key = "#name", waitTime = "30s")
    public Flux<Long> incrementTwice(String name) {
      return Flux.range(0, 2)
          .concatMap(
              i -> {
                long read = count.get();
                return Mono.delay(Duration.ofMillis(1)).map(t -> read + 1).doOnNext(count::set);
              });
    }

    @Locked(name = "never", key = "#key", waitTime = "0")
    public Mono<String> never(String key) {
      return Mono.never();
    }

    @Locked(name = "ticks", key = "#name", waitTime = "0")
    public Flux<Long> ticks(String name) {
      return Flux.interval(Duration.ofMillis(10));
    }

    @Locked(
        name = "guarded",
        waitTime = "0",
        leaseTime = "600ms",
        onLeaseLost = OnLeaseLost.INTERRUPT)
    public Flux<Long> guardedTicks() {
      return Flux.interval(Duration.ofMillis(10));
    }
  }
}
