package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The contract suite on the MariaDB named by {@code DLOCK_TEST_MYSQL_URL}, else an embedded one,
 * row locks.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class MariaDbRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.mariaDb().orElseThrow();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.ROW;
  }
}
