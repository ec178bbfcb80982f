package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The contract suite on the MySQL dialect, forced on the MariaDB named by {@code
 * DLOCK_TEST_MYSQL_URL}, else an embedded one, row mode: the statements a MySQL 8 deployment runs,
 * on a server that runs them unchanged.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class MySqlOnMariaDbRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.mariaDb().orElseThrow();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.ROW;
  }

  @Override
  protected JdbcLockSettings settings() {
    return TestDatabases.mySqlSettings(url(), mode());
  }
}
