package io.dlock.idempotency;

import org.junit.jupiter.api.BeforeAll;

/** The flash sale on H2 in memory, in process. */
class H2FlashSaleTest extends FlashSaleTest {
  @BeforeAll
  static void start() throws Exception {
    open("H2", "jdbc:h2:mem:flash-sale;DB_CLOSE_DELAY=-1");
  }
}
