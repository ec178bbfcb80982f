package io.dlock.idempotency;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;

/**
 * The JDBC contract on the MySQL or MariaDB at {@code DLOCK_TEST_MYSQL_URL}; skipped without it.
 */
class MariaDbStoresTest extends JdbcStoresTest {
  @BeforeAll
  static void start() {
    assumeTrue(
        TestDatabases.mariaDb().isPresent(),
        () -> TestDatabases.skipReason(TestDatabases.MYSQL_URL_VARIABLE));
    open(TestDatabases.mariaDb().orElseThrow());
  }
}
