package io.dlock.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.update.ConditionalUpdate;
import io.dlock.idempotency.update.RetryPolicy;
import io.dlock.idempotency.update.VersionCheckedResult;
import io.dlock.idempotency.update.VersionCheckedUpdate;
import io.dlock.idempotency.update.Versioned;
import io.dlock.redis.RedisLocks;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The flash sale from the articles, with the stock in a database row, sold out by 8 buyer threads
 * in five ways: a dlock Redis lock around read-check-write, one conditional {@code UPDATE ... WHERE
 * n >= ?}, a version-checked update, and the conditional update behind a dedup record or a one-time
 * token (each order submitted twice, as a client retrying after a timeout would). Each way must
 * sell exactly the stock and never go below zero; the throughput of each is printed and appended to
 * {@code target/flash-sale-throughput.txt}.
 *
 * <p>{@code -Ddlock.flashSale.stock=N} changes the stock (default 2000).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
abstract class FlashSaleTest {
  static final int BUYERS = 8;
  static final long STOCK = Long.getLong("dlock.flashSale.stock", 2000);
  private static final String DECREMENT =
      "UPDATE flash_stock SET n = n - ? WHERE id = ? AND n >= ?";

  static HikariDataSource pool;
  static String database;
  private static RedisServerProcess redis;
  private static LockClient locks;

  enum Attempt {
    SOLD,
    SOLD_OUT,
    RETRY
  }

  /** One purchase of one item by buyer {@code buyer}, its {@code order}-th. */
  @FunctionalInterface
  interface Buy {
    Attempt buy(String sku, int buyer, int order) throws Exception;
  }

  static void open(String name, String url) throws SQLException {
    database = name;
    pool = TestDatabases.pool(url, BUYERS + 4);
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS flash_stock (id VARCHAR(64) NOT NULL PRIMARY KEY,"
              + " n BIGINT NOT NULL, version BIGINT NOT NULL)");
    }
  }

  @AfterAll
  static void close() {
    if (locks != null) {
      locks.close();
      locks = null;
    }
    if (redis != null) {
      redis.close();
      redis = null;
    }
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }

  @Test
  void withARedisLockAroundReadCheckWrite() throws Exception {
    if (redis == null) {
      redis = RedisServerProcess.start();
      locks = RedisLocks.newClient(redis.uri());
    }
    sell(
        "lock (dlock Redis lock, read-check-write)",
        (sku, buyer, order) -> {
          try (Lease lease = locks.lock("flash:" + sku).acquire(TestTiming.millis(30_000))) {
            try (Connection c = pool.getConnection()) {
              long n = stock(c, sku);
              if (n < 1) {
                return Attempt.SOLD_OUT;
              }
              ConditionalUpdate.run(c, "UPDATE flash_stock SET n = ? WHERE id = ?", n - 1, sku);
              return Attempt.SOLD;
            }
          }
        });
  }

  @Test
  void withAConditionalDecrementAndNoLock() throws Exception {
    sell(
        "conditional update (UPDATE ... WHERE n >= ?)",
        (sku, buyer, order) ->
            ConditionalUpdate.run(pool, DECREMENT, 1L, sku, 1L) ? Attempt.SOLD : Attempt.SOLD_OUT);
  }

  @Test
  void withAVersionCheckedUpdate() throws Exception {
    RetryPolicy retry = RetryPolicy.of(20, Duration.ofNanos(200_000), Duration.ofMillis(20));
    sell(
        "version-checked update (retries with jittered backoff)",
        (sku, buyer, order) -> {
          VersionCheckedResult<Long> result =
              VersionCheckedUpdate.run(
                  pool,
                  retry,
                  c -> versioned(c, sku),
                  n -> n >= 1 ? Optional.of(n - 1) : Optional.empty(),
                  (c, n, version) ->
                      ConditionalUpdate.run(
                          c,
                          "UPDATE flash_stock SET n = ?, version = version + 1"
                              + " WHERE id = ? AND version = ?",
                          n,
                          sku,
                          version));
          switch (result.status()) {
            case APPLIED:
              return Attempt.SOLD;
            case CONFLICT:
              return Attempt.RETRY;
            default:
              return Attempt.SOLD_OUT;
          }
        });
  }

  @Test
  void withADedupRecordPerOrderAndEveryOrderSentTwice() throws Exception {
    JdbcIdempotency db = TestDatabases.stores(pool, "flash_");
    DedupRecords records = DedupRecords.on(db.dedupStore());
    sell(
        "dedup record per order + conditional update (each order sent twice)",
        (sku, buyer, order) -> {
          String orderId = sku + ":" + buyer + ":" + order;
          IdempotentAction<String> placeOrder =
              () -> ConditionalUpdate.run(pool, DECREMENT, 1L, sku, 1L) ? "sold" : "sold-out";
          RunOnceResult<String> first = records.runOnce(orderId, placeOrder);
          RunOnceResult<String> retry = records.runOnce(orderId, placeOrder);
          assertThat(first).isInstanceOf(RunOnceResult.Executed.class);
          assertThat(retry).isEqualTo(new RunOnceResult.Replayed<>(first.value().orElseThrow()));
          return first.value().orElseThrow().equals("sold") ? Attempt.SOLD : Attempt.SOLD_OUT;
        });
  }

  @Test
  void withAOneTimeTokenPerOrderAndEveryOrderSentTwice() throws Exception {
    TokenStore tokens = TestDatabases.stores(pool, "flash_").tokenStore();
    sell(
        "one-time token per order + conditional update (each order sent twice)",
        (sku, buyer, order) -> {
          IssuedToken token = tokens.issue(Duration.ofMinutes(5)); // handed to the client first
          assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.CONSUMED);
          Attempt attempt =
              ConditionalUpdate.run(pool, DECREMENT, 1L, sku, 1L) ? Attempt.SOLD : Attempt.SOLD_OUT;
          // The client's retry with the same token is refused before it reaches the stock.
          assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.ALREADY_CONSUMED);
          return attempt;
        });
  }

  private void sell(String way, Buy buy) throws Exception {
    String sku = "sku-" + UUID.randomUUID();
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement("INSERT INTO flash_stock (id, n, version) VALUES (?, ?, 0)")) {
      ps.setString(1, sku);
      ps.setLong(2, STOCK);
      ps.executeUpdate();
    }
    ExecutorService buyers = Executors.newFixedThreadPool(BUYERS);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<long[]>> results = new ArrayList<>();
      for (int b = 0; b < BUYERS; b++) {
        int buyer = b;
        results.add(
            buyers.submit(
                () -> {
                  start.await();
                  long sold = 0;
                  long retries = 0;
                  for (int order = 0; ; order++) {
                    Attempt attempt = buy.buy(sku, buyer, order);
                    if (attempt == Attempt.SOLD) {
                      sold++;
                    } else if (attempt == Attempt.RETRY) {
                      retries++;
                    } else {
                      return new long[] {sold, retries};
                    }
                  }
                }));
      }
      long began = System.nanoTime();
      start.countDown();
      long sold = 0;
      long retries = 0;
      for (Future<long[]> result : results) {
        long[] r = result.get(TestTiming.millis(120_000).toMillis(), TimeUnit.MILLISECONDS);
        sold += r[0];
        retries += r[1];
      }
      double seconds = (System.nanoTime() - began) / 1e9;
      long left;
      try (Connection c = pool.getConnection()) {
        left = stock(c, sku);
      }
      // The stock only decreases; ending at exactly zero with exactly the stock sold means it
      // never went below zero and nothing was sold twice.
      assertThat(left).as("stock left").isZero();
      assertThat(sold).as("items sold").isEqualTo(STOCK);
      String line =
          String.format(
              Locale.ROOT,
              "%-10s | %-70s | %d buyers | stock %d | %5.2f s | %7.0f purchases/s%s",
              database,
              way,
              BUYERS,
              STOCK,
              seconds,
              sold / seconds,
              retries == 0 ? "" : " | " + retries + " version conflicts given up and retried");
      System.out.println("FLASH-SALE " + line);
      Path report = Path.of("target", "flash-sale-throughput.txt");
      try {
        Files.writeString(
            report, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      } catch (IOException e) {
        System.out.println("Cannot write " + report + ": " + e);
      }
    } finally {
      buyers.shutdownNow();
    }
  }

  private static long stock(Connection c, String sku) throws SQLException {
    Versioned<Long> row = versioned(c, sku);
    return row == null ? 0 : row.value();
  }

  private static Versioned<Long> versioned(Connection c, String sku) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT n, version FROM flash_stock WHERE id = ?")) {
      ps.setString(1, sku);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Versioned<>(rs.getLong(1), rs.getLong(2)) : null;
      }
    }
  }
}
