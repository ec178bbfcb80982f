package io.dlock.jdbc;

import io.dlock.testkit.server.PostgresServerProcess;

/** The contract suite on PostgreSQL (external, else embedded), row locks. */
class PostgresRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.postgres();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.ROW;
  }

  @Override
  protected java.util.Optional<io.dlock.testkit.ServerControl> serverControl() {
    return TestDatabases.externalPostgres().isPresent()
        ? java.util.Optional.empty()
        : java.util.Optional.of(PostgresServerProcess.shared());
  }
}
