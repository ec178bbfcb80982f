package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockLostException;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transaction trap of the articles, on a real database transaction (H2) and a real Redis lock:
 * a method that reads "is there an order?" and inserts one if not, called inside a transaction. If
 * the lock is released when the method returns, before the commit, the next holder reads the old
 * data and inserts a duplicate.
 */
class ReleaseAfterCommitTest {
  private static final String PREFIX = "tx-" + UUID.randomUUID() + ":";
  private static LockClient otherProcess;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  AopAutoConfiguration.class,
                  DataSourceAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  TransactionAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  DlockAutoConfiguration.class))
          .withPropertyValues(
              "dlock.backend=" + TestRedis.uri(),
              "dlock.key-prefix=" + PREFIX,
              "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
          .withUserConfiguration(Beans.class);

  @Test
  void releasedBeforeCommitTheNextHolderReadsStaleDataAndInsertsADuplicate() {
    runner
        .withPropertyValues("dlock.release-after-transaction=false")
        .run(
            context -> {
              Race race = race(context, "order-1");
              // The second caller got the lock and read while the first had not committed yet.
              assertThat(race.secondReadBeforeFirstCommitted).isTrue();
              assertThat(rows(context, "order-1")).isEqualTo(2);
            });
  }

  @Test
  void releasedAfterCommitTheNextHolderSeesTheOrderAndInsertsNothing() {
    runner.run(
        context -> {
          Race race = race(context, "order-1");
          // The second caller could not get the lock until the first had committed.
          assertThat(race.secondReadBeforeFirstCommitted).isFalse();
          assertThat(race.secondInserted).isFalse();
          assertThat(rows(context, "order-1")).isEqualTo(1);
        });
  }

  @Test
  void aRollbackAlsoReleasesTheLock() {
    runner.run(
        context -> {
          Orders orders = context.getBean(Orders.class);
          TransactionTemplate tx = context.getBean(TransactionTemplate.class);
          assertThatThrownBy(
                  () ->
                      tx.executeWithoutResult(
                          status -> {
                            orders.insertIfAbsent("order-2", () -> {});
                            assertThat(heldByAnother("order-2")).isTrue();
                            throw new IllegalStateException("payment refused");
                          }))
              .hasMessage("payment refused");
          assertThat(rows(context, "order-2")).isZero();
          assertThat(heldByAnother("order-2")).isFalse();
        });
  }

  @Test
  void aLeaseLostWhileTheMethodRanRollsTheTransactionBack() {
    runner.run(
        context -> {
          Orders orders = context.getBean(Orders.class);
          LockClient client = context.getBean(LockClient.class);
          TransactionTemplate tx = context.getBean(TransactionTemplate.class);
          assertThatThrownBy(
                  () ->
                      tx.executeWithoutResult(
                          status -> orders.insertWhileBroken("order-4", client)))
              .isInstanceOf(LockLostException.class)
              .hasMessageContaining("Orders.insertWhileBroken(String, LockClient)")
              .hasMessageContaining("rolled back");
          assertThat(rows(context, "order-4")).isZero();
        });
  }

  @Test
  void transactionalLockedMethodUnderEightConcurrentCallersInsertsOnce() {
    runner.run(
        context -> {
          Orders orders = context.getBean(Orders.class);
          ExecutorService pool = Executors.newFixedThreadPool(8);
          try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
              results.add(
                  pool.submit(
                      () -> {
                        start.await();
                        return orders.insertIfAbsentInItsOwnTransaction("order-3");
                      }));
            }
            start.countDown();
            int inserted = 0;
            for (Future<Boolean> r : results) {
              if (r.get(
                  TestTiming.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)) {
                inserted++;
              }
            }
            assertThat(inserted).isEqualTo(1);
          } finally {
            pool.shutdownNow();
          }
          assertThat(rows(context, "order-3")).isEqualTo(1);
        });
  }

  /** Whether another client finds the lock of {@code ref} held. */
  private static boolean heldByAnother(String ref) {
    Optional<Lease> lease = otherProcess.lock(PREFIX + "order:" + ref).tryAcquire();
    lease.ifPresent(Lease::release);
    return lease.isEmpty();
  }

  @BeforeAll
  static void connectOtherProcess() {
    otherProcess = LockClients.connect(TestRedis.uri());
  }

  @AfterAll
  static void closeOtherProcess() {
    otherProcess.close();
  }

  /**
   * Two callers, each in its own transaction. The first inserts the order, then keeps its
   * transaction open for a bounded window, waiting for the second to have read; the second starts
   * once the first's locked method returned.
   */
  private static Race race(ApplicationContext context, String ref) throws Exception {
    Orders orders = context.getBean(Orders.class);
    TransactionTemplate tx = context.getBean(TransactionTemplate.class);
    CountDownLatch firstReturned = new CountDownLatch(1);
    CountDownLatch secondRead = new CountDownLatch(1);
    AtomicBoolean secondReadInTime = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?> first =
          pool.submit(
              () ->
                  tx.executeWithoutResult(
                      status -> {
                        orders.insertIfAbsent(ref, () -> {});
                        firstReturned.countDown();
                        // The window between the locked method's end and the commit: with the
                        // lock released at the method's end, the second caller reads in it.
                        secondReadInTime.set(await(secondRead, 1000));
                      }));
      Future<Boolean> second =
          pool.submit(
              () -> {
                assertThat(await(firstReturned, 10_000)).isTrue();
                return tx.execute(status -> orders.insertIfAbsent(ref, secondRead::countDown));
              });
      long timeout = TestTiming.scaled(Duration.ofSeconds(20)).toMillis();
      first.get(timeout, TimeUnit.MILLISECONDS);
      boolean secondInserted = second.get(timeout, TimeUnit.MILLISECONDS);
      return new Race(secondReadInTime.get(), secondInserted);
    } finally {
      pool.shutdownNow();
    }
  }

  private static boolean await(CountDownLatch latch, long millis) {
    try {
      return latch.await(TestTiming.millis(millis).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static int rows(ApplicationContext context, String ref) {
    return context
        .getBean(JdbcTemplate.class)
        .queryForObject("select count(*) from orders where ref = ?", Integer.class, ref);
  }

  record Race(boolean secondReadBeforeFirstCommitted, boolean secondInserted) {}

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Orders orders(JdbcTemplate jdbc) {
      jdbc.execute("create table orders (id identity primary key, ref varchar(64) not null)");
      return new Orders(jdbc);
    }
  }

  /** Inserts an order unless one exists: safe only while the lock covers read and commit. */
  public static class Orders {
    private final JdbcTemplate jdbc;

    public Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Locked(name = "order", key = "#ref", waitTime = "30s")
    public boolean insertIfAbsent(String ref, Runnable afterRead) {
      Integer existing =
          jdbc.queryForObject("select count(*) from orders where ref = ?", Integer.class, ref);
      afterRead.run();
      if (existing != null && existing > 0) {
        return false;
      }
      jdbc.update("insert into orders (ref) values (?)", ref);
      return true;
    }

    /** Inserts, while an administrator breaks the lock: the write was made without the lock. */
    @Locked(name = "order", key = "#ref", leaseTime = "300ms")
    public void insertWhileBroken(String ref, LockClient client) {
      jdbc.update("insert into orders (ref) values (?)", ref);
      Lease lease = LockedMethodContext.currentLease().orElseThrow();
      assertThat(client.forceRelease(lease.lockName())).isPresent();
      // The next renewal (a third of the lease) finds the lock gone.
      org.awaitility.Awaitility.await()
          .atMost(TestTiming.scaled(Duration.ofSeconds(5)))
          .until(() -> !lease.isValid());
    }

    @Locked(name = "order", key = "#ref", waitTime = "30s")
    @Transactional
    public boolean insertIfAbsentInItsOwnTransaction(String ref) {
      return insertIfAbsent(ref, () -> {});
    }
  }
}
