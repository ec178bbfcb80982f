package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The contract suite on the MariaDB named by {@code DLOCK_TEST_MYSQL_URL}, row locks. */
@EnabledIfEnvironmentVariable(
    named = TestDatabases.MYSQL_URL_VARIABLE,
    matches = ".+",
    disabledReason = "DLOCK_TEST_MYSQL_URL is not set: no MariaDB to test against")
class MariaDbRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.externalMariaDb().orElseThrow();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.ROW;
  }
}
