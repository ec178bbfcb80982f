package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The contract suite on the MariaDB named by {@code DLOCK_TEST_MYSQL_URL}, else an embedded one,
 * GET_LOCK locks.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class MariaDbSessionContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.mariaDb().orElseThrow();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.SESSION;
  }
}
