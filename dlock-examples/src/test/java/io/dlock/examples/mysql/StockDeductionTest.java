package io.dlock.examples.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.examples.mysql.StockDeduction.Outcome;
import io.dlock.examples.mysql.StockDeduction.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The articles' stock deductions ({@link FlawedStockDeduction}, {@link
 * FlawedVersionedStockDeduction}) next to {@link StockDeduction}. The race is forced, not hoped
 * for: buyer A and buyer B both read the row before either writes, then A writes, then B.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StockDeductionTest {
  private static DataSource dataSource;
  private static StockTable table;
  private static ExecutorService threads;

  @BeforeAll
  static void createTable() throws Exception {
    ExampleDatabase.url();
    dataSource = ExampleDatabase.dataSource();
    table = new StockTable(dataSource);
    table.createIfMissing();
    threads = Executors.newCachedThreadPool(ExampleDatabase::daemon);
  }

  @AfterAll
  static void stopThreads() {
    if (threads != null) {
      threads.shutdownNow();
    }
  }

  // --- Read, check in Java, write the computed stock ---------------------------------------

  @Test
  void flawedReadThenWriteSellsFiveOfFour() throws Exception {
    String sku = ExampleDatabase.unique("sku");
    table.put(sku, 4);
    BothReadThenAFirst race = new BothReadThenAFirst();
    FlawedStockDeduction a = new FlawedStockDeduction(dataSource, race.forA());
    FlawedStockDeduction b = new FlawedStockDeduction(dataSource, race.forB());

    Race<Boolean> sale = race.run(() -> a.deduct(sku, 3), () -> b.deduct(sku, 2));

    assertThat(sale.a()).as("A is told it bought 3").isTrue();
    assertThat(sale.b()).as("B is told it bought 2").isTrue();
    assertThat(table.read(sku).stock())
        .as("5 sold of 4, and the stock says 2: A's sale was overwritten")
        .isEqualTo(2);
  }

  @Test
  void conditionalUpdateSellsOnlyWhatIsInStock() throws Exception {
    String sku = ExampleDatabase.unique("sku");
    table.put(sku, 4);
    BothReadThenAFirst race = new BothReadThenAFirst();
    StockDeduction a = new StockDeduction(dataSource, 5, race.forA());
    StockDeduction b = new StockDeduction(dataSource, 5, race.forB());

    Race<Result> sale = race.run(() -> a.deduct(sku, 3), () -> b.deduct(sku, 2));

    assertThat(sale.a()).isEqualTo(new Result(Outcome.DEDUCTED, 1));
    // B's update matched no row (the version moved on); B read again: 1 left, 2 wanted.
    assertThat(sale.b()).isEqualTo(new Result(Outcome.INSUFFICIENT_STOCK, 2));
    assertThat(table.read(sku).stock()).as("3 sold of 4").isEqualTo(1);
  }

  // --- The version-checked update whose count nobody reads ---------------------------------

  @Test
  void flawedVersionCheckWithoutItsUpdateCountReportsASaleThatNeverHappened() throws Exception {
    String sku = ExampleDatabase.unique("sku");
    table.put(sku, 10);
    BothReadThenAFirst race = new BothReadThenAFirst();
    FlawedVersionedStockDeduction a = new FlawedVersionedStockDeduction(dataSource, race.forA());
    FlawedVersionedStockDeduction b = new FlawedVersionedStockDeduction(dataSource, race.forB());

    Race<Boolean> sale = race.run(() -> a.deduct(sku, 3), () -> b.deduct(sku, 2));

    assertThat(sale.a()).isTrue();
    assertThat(sale.b()).as("B is told it bought 2").isTrue();
    assertThat(table.read(sku).stock())
        .as("5 reported sold, only A's 3 taken from the stock")
        .isEqualTo(7);
  }

  @Test
  void conditionalUpdateRetriesTheLostRaceAndBothBuyersGetTheirGoods() throws Exception {
    String sku = ExampleDatabase.unique("sku");
    table.put(sku, 10);
    BothReadThenAFirst race = new BothReadThenAFirst();
    StockDeduction a = new StockDeduction(dataSource, 5, race.forA());
    StockDeduction b = new StockDeduction(dataSource, 5, race.forB());

    Race<Result> sale = race.run(() -> a.deduct(sku, 3), () -> b.deduct(sku, 2));

    assertThat(sale.a()).isEqualTo(new Result(Outcome.DEDUCTED, 1));
    assertThat(sale.b()).isEqualTo(new Result(Outcome.DEDUCTED, 2));
    assertThat(table.read(sku).stock()).as("5 sold, 5 taken").isEqualTo(5);
  }

  // --- Retries with a bound ----------------------------------------------------------------

  @Test
  void conditionalUpdateGivesUpAfterItsAttemptsUnderSustainedConflict() throws Exception {
    String sku = ExampleDatabase.unique("sku");
    table.put(sku, 10);
    AtomicInteger reads = new AtomicInteger();
    // Another writer changes the row between every read and update of this buyer.
    StockDeduction buyer =
        new StockDeduction(
            dataSource,
            5,
            attempt -> {
              reads.incrementAndGet();
              table.put(sku, 10);
            });

    assertThat(buyer.deduct(sku, 1)).isEqualTo(new Result(Outcome.CONFLICT, 5));
    assertThat(reads).hasValue(5);
    assertThat(table.read(sku).stock()).as("nothing taken").isEqualTo(10);
  }

  @Test
  void conditionalUpdateNeverOversellsUnderLoad() throws Exception {
    String sku = ExampleDatabase.unique("sku");
    long initial = 60;
    table.put(sku, initial);
    StockDeduction deduction = new StockDeduction(dataSource, StockDeduction.MAX_ATTEMPTS);
    List<Future<Long>> buyers = new ArrayList<>();
    for (int buyer = 0; buyer < 4; buyer++) {
      Random random = new Random(buyer);
      buyers.add(
          threads.submit(
              () -> {
                long taken = 0;
                for (int order = 0; order < 25; order++) {
                  long quantity = 1 + random.nextInt(3);
                  if (deduction.deduct(sku, quantity).outcome() == Outcome.DEDUCTED) {
                    taken += quantity;
                  }
                }
                return taken;
              }));
    }
    long sold = 0;
    for (Future<Long> buyer : buyers) {
      sold += buyer.get(60, TimeUnit.SECONDS);
    }
    long left = table.read(sku).stock();
    assertThat(left).isNotNegative();
    assertThat(sold).as("every unit sold was taken from the stock").isEqualTo(initial - left);
  }

  // --- Bad input ---------------------------------------------------------------------------

  @Test
  void badInputNamesTheParameterAndTheAllowedRange() throws Exception {
    StockDeduction deduction = new StockDeduction(dataSource, 3);
    assertThatThrownBy(() -> deduction.deduct("sku-1", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("quantity must be from 1 to 1000000, but was 0");
    assertThatThrownBy(() -> deduction.deduct("sku-1", 1_000_001))
        .hasMessage("quantity must be from 1 to 1000000, but was 1000001");
    assertThatThrownBy(() -> deduction.deduct("", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("sku must have 1 to 64 characters without control characters");
    assertThatThrownBy(() -> deduction.deduct("x".repeat(65), 1))
        .hasMessageContaining("(65 characters)");
    assertThatThrownBy(() -> deduction.deduct("sku\n1", 1)).hasMessageContaining("'sku?1'");
    assertThatThrownBy(() -> new StockDeduction(dataSource, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxAttempts must be from 1 to 100, but was 0");
    assertThatThrownBy(() -> new StockDeduction(dataSource, 101))
        .hasMessage("maxAttempts must be from 1 to 100, but was 101");
  }

  // --- The forced interleaving -------------------------------------------------------------

  record Race<T>(T a, T b) {}

  /** Both buyers read before either writes; then A writes, and B only once A is done. */
  private static final class BothReadThenAFirst {
    private final CountDownLatch bothRead = new CountDownLatch(2);
    private final CountDownLatch aDone = new CountDownLatch(1);

    BetweenReadAndWrite forA() {
      return attempt -> {
        if (attempt == 1) {
          bothRead.countDown();
          await(bothRead);
        }
      };
    }

    BetweenReadAndWrite forB() {
      return attempt -> {
        if (attempt == 1) {
          bothRead.countDown();
          await(bothRead);
          await(aDone);
        }
      };
    }

    <T> Race<T> run(Callable<T> a, Callable<T> b) throws Exception {
      Future<T> first =
          threads.submit(
              () -> {
                try {
                  return a.call();
                } finally {
                  aDone.countDown();
                }
              });
      Future<T> second = threads.submit(b);
      return new Race<>(first.get(30, TimeUnit.SECONDS), second.get(30, TimeUnit.SECONDS));
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
      if (!latch.await(20, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the other buyer never got there");
      }
    }
  }
}
