package io.dlock.jdbc;

import io.dlock.testkit.ServerControl;
import io.dlock.testkit.server.PostgresServerProcess;
import java.util.Optional;

/**
 * The contract suite on PostgreSQL, lease rows: the server named by {@code
 * DLOCK_TEST_POSTGRES_URL}, or else an embedded server this JVM starts (and can stop and restart).
 */
class PostgresLeaseRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return TestDatabases.postgres();
  }

  @Override
  protected Optional<ServerControl> serverControl() {
    return TestDatabases.externalPostgres().isPresent()
        ? Optional.empty()
        : Optional.of(PostgresServerProcess.shared());
  }
}
