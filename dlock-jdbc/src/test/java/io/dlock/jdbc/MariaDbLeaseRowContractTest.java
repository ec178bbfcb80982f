package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The contract suite on the MariaDB named by {@code DLOCK_TEST_MYSQL_URL}, else an embedded one,
 * lease rows.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class MariaDbLeaseRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.mariaDb().orElseThrow();
  }
}
