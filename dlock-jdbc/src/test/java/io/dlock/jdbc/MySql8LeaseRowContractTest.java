package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The contract suite on the MySQL 8 named by {@code DLOCK_TEST_MYSQL8_URL}, lease row mode; skipped
 * with that reason without one.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMySql8",
    disabledReason = TestDatabases.NO_MYSQL8)
class MySql8LeaseRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.mySql8().orElseThrow();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.LEASE_ROW;
  }

  @Override
  protected JdbcLockSettings settings() {
    return TestDatabases.mySqlSettings(url(), mode());
  }
}
