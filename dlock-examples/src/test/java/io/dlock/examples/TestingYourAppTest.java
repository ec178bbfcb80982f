package io.dlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.redis.RedisLocks;
import io.dlock.testkit.InMemoryLockBackend;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The code of docs/testing-your-app.md, compiled and run here so that the guide stays true: how an
 * application tests its locked code with the in-memory backend of dlock-testkit (two instances of a
 * service on one "server"; a lock deleted behind its holder's back) and with a real server the test
 * starts itself.
 */
class TestingYourAppTest {

  /** The application's code under test: takes one item of a stock, under the stock's lock. */
  static final class StockService {
    private final LockClient locks;
    private final StockRow row;

    StockService(LockClient locks, StockRow row) {
      this.locks = locks;
      this.row = row;
    }

    boolean takeOne() throws InterruptedException {
      try (Lease lease = locks.lock("stock:sku-42").acquire(Duration.ofSeconds(5))) {
        int left = row.read();
        if (left == 0) {
          return false;
        }
        row.write(left - 1); // read, then write: two instances without the lock oversell here
        return true;
      }
    }
  }

  /** The shared row the instances read and write: a database's, in a real application. */
  static final class StockRow {
    private volatile int left;

    StockRow(int left) {
      this.left = left;
    }

    int read() {
      return left;
    }

    void write(int value) {
      left = value;
    }
  }

  @Test
  void twoInstancesOnOneInMemoryServerNeverOversell() throws Exception {
    InMemoryLockBackend server = new InMemoryLockBackend(); // one "lock server" for the test
    StockRow row = new StockRow(60);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (LockClient a = LockClients.create(server.sharedView(), LockClientOptions.defaults());
        LockClient b = LockClients.create(server.sharedView(), LockClientOptions.defaults())) {
      StockService first = new StockService(a, row); // two instances of the service,
      StockService second = new StockService(b, row); // each with a client of its own
      Future<Integer> soldByFirst = threads.submit(() -> takeMany(first, 50));
      Future<Integer> soldBySecond = threads.submit(() -> takeMany(second, 50));
      assertThat(soldByFirst.get() + soldBySecond.get()).isEqualTo(60);
      assertThat(row.read()).isZero();
    } finally {
      threads.shutdownNow();
    }
  }

  private static int takeMany(StockService service, int times) throws InterruptedException {
    int sold = 0;
    for (int i = 0; i < times; i++) {
      sold += service.takeOne() ? 1 : 0;
    }
    return sold;
  }

  @Test
  void aLockDeletedBehindItsHoldersBackIsReportedLost() throws Exception {
    InMemoryLockBackend server = new InMemoryLockBackend();
    LockOptions shortLease = LockOptions.defaults().withRenewedLease(Duration.ofMillis(600));
    try (LockClient locks = LockClients.create(server, LockClientOptions.defaults());
        Lease lease = locks.lock("report:daily", shortLease).acquire(Duration.ofSeconds(5))) {
      AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
      lease.onLost(lost::set);
      server.delete("report:daily"); // as an operator's forced release would
      await().atMost(Duration.ofSeconds(5)).until(() -> lost.get() != null); // next renewal
      assertThat(lease.isValid()).isFalse();
    }
  }

  @Test
  void aRealRedisServerStartedByTheTest() throws Exception {
    try (RedisServerProcess redis = RedisServerProcess.start(); // a free loopback port
        LockClient locks = RedisLocks.newClient(redis.uri());
        Lease lease = locks.lock("stock:sku-42").acquire(Duration.ofSeconds(5))) {
      assertThat(lease.fencingToken()).isPositive();
    }
  }
}
