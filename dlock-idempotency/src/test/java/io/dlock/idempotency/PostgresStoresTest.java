package io.dlock.idempotency;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;

/** The JDBC contract on the PostgreSQL at {@code DLOCK_TEST_POSTGRES_URL}; skipped without it. */
class PostgresStoresTest extends JdbcStoresTest {
  @BeforeAll
  static void start() {
    assumeTrue(
        TestDatabases.postgres().isPresent(),
        () -> TestDatabases.skipReason(TestDatabases.POSTGRES_URL_VARIABLE));
    open(TestDatabases.postgres().orElseThrow());
  }
}
