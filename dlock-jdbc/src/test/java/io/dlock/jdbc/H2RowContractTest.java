package io.dlock.jdbc;

/** The contract suite on H2 in process, row locks (H2 has no session locks). */
class H2RowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.H2_URL;
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.ROW;
  }
}
