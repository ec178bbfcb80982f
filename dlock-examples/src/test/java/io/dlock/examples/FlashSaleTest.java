package io.dlock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.testkit.server.RedisServerProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The flash sale over a real redis-server, with buyers in separate OS processes. */
class FlashSaleTest {
  private static RedisServerProcess redis;

  @BeforeAll
  static void startRedis() {
    redis = RedisServerProcess.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  @Test
  void withTheLockExactlyOneOfTheTwoBuyersSucceeds() throws Exception {
    FlashSaleDemo.TwoBuyers result = FlashSaleDemo.twoBuyers(redis.uri(), true);
    assertThat(result.successes()).isEqualTo(1);
    assertThat(result.stockLeft()).isIn(1L, 2L);
  }

  @Test
  void withoutTheLockBothBuyersPassTheCheckAndStockGoesNegative() throws Exception {
    // Both read 4 within the 50 ms payment window: the articles' oversell, 5 sold of 4.
    FlashSaleDemo.TwoBuyers result = FlashSaleDemo.twoBuyers(redis.uri(), false);
    assertThat(result.successes()).isEqualTo(2);
    assertThat(result.stockLeft()).isEqualTo(-1);
  }

  @Test
  void buyerProcessesSellExactlyTheStockWithTheLockAndOversellWithout() throws Exception {
    FlashSaleDemo.Options options = FlashSaleDemo.Options.parse(new String[] {"--stock", "100"});
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

    FlashSaleDemo.Sale locked = FlashSaleDemo.sale(redis.uri(), true, options, quiet);
    assertThat(locked.soldPerProcess()).hasSize(2);
    assertThat(locked.sold()).isEqualTo(100);
    assertThat(locked.stockLeft()).isZero();
    assertThat(locked.minStockSeen()).isZero();

    // Without the lock the race is likely but not certain in one run; three runs make it sure.
    long oversold = 0;
    for (int run = 0; run < 3 && oversold == 0; run++) {
      oversold = FlashSaleDemo.sale(redis.uri(), false, options, quiet).oversold();
    }
    assertThat(oversold).as("units sold beyond the stock without the lock").isPositive();
  }

  @Test
  void theLockFreeConditionalDecrementSellsExactlyTheStock() throws Exception {
    FlashSaleDemo.Options options = FlashSaleDemo.Options.parse(new String[] {"--stock", "100"});
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    FlashSaleDemo.Sale lockFree = FlashSaleDemo.sale(redis.uri(), "conditional", options, quiet);
    assertThat(lockFree.sold()).isEqualTo(100);
    assertThat(lockFree.stockLeft()).isZero();
    assertThat(lockFree.minStockSeen()).isZero();
  }

  @Test
  void badOptionsNameTheOptionAndItsRange() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> FlashSaleDemo.Options.parse(new String[] {"--stock", "0"}))
        .hasMessageContaining("--stock must be from 1 to 100000");
  }
}
