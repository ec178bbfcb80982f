package io.dlock.idempotency;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;

/**
 * The JDBC contract on the MySQL 8 at {@code DLOCK_TEST_MYSQL8_URL}; skipped without it (MySQL 8
 * server binaries are not on Maven Central: {@link MySqlDriverStoresTest} runs the same statements
 * through MySQL's driver on MariaDB).
 */
class MySql8StoresTest extends JdbcStoresTest {
  @BeforeAll
  static void start() {
    assumeTrue(
        TestDatabases.mySql8().isPresent(),
        TestDatabases.MYSQL8_URL_VARIABLE + " names no MySQL 8: skipping the tests on MySQL 8");
    open(TestDatabases.mySql8().orElseThrow());
  }
}
