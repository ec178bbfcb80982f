package io.dlock.jdbc;

import io.dlock.testkit.server.PostgresServerProcess;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The contract suite on the embedded PostgreSQL, session locks, when an external one is set. */
@EnabledIfEnvironmentVariable(
    named = TestDatabases.POSTGRES_URL_VARIABLE,
    matches = ".+",
    disabledReason =
        "the PostgreSQL contract test of this mode already runs on the embedded server")
class EmbeddedPostgresSessionContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return PostgresServerProcess.shared().url();
  }

  @Override
  protected JdbcLockMode mode() {
    return JdbcLockMode.SESSION;
  }

  @Override
  protected java.util.Optional<io.dlock.testkit.ServerControl> serverControl() {
    return java.util.Optional.of(PostgresServerProcess.shared());
  }
}
