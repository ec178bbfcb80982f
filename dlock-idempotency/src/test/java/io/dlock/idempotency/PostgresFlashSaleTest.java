package io.dlock.idempotency;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;

/** The flash sale on the PostgreSQL at {@code DLOCK_TEST_POSTGRES_URL}; skipped without it. */
class PostgresFlashSaleTest extends FlashSaleTest {
  @BeforeAll
  static void start() throws Exception {
    assumeTrue(
        TestDatabases.postgres().isPresent(),
        () -> TestDatabases.skipReason(TestDatabases.POSTGRES_URL_VARIABLE));
    open("PostgreSQL", TestDatabases.postgres().orElseThrow());
  }
}
