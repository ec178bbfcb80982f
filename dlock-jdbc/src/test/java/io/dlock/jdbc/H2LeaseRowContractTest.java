package io.dlock.jdbc;

/** The contract suite on H2 in process, lease rows. */
class H2LeaseRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.H2_URL;
  }
}
