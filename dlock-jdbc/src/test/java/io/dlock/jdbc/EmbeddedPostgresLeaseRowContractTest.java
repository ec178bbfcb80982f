package io.dlock.jdbc;

import io.dlock.testkit.ServerControl;
import io.dlock.testkit.server.PostgresServerProcess;
import java.util.Optional;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The contract suite on the embedded PostgreSQL even when an external one is configured, so that
 * the path a fresh machine takes (binaries from Maven Central, started as an unprivileged user when
 * run as root) is proven here too. Without the variable, {@link PostgresLeaseRowContractTest}
 * already runs on the embedded server.
 */
@EnabledIfEnvironmentVariable(
    named = TestDatabases.POSTGRES_URL_VARIABLE,
    matches = ".+",
    disabledReason = "PostgresLeaseRowContractTest already runs on the embedded PostgreSQL")
class EmbeddedPostgresLeaseRowContractTest extends JdbcLockContractTest {
  @Override
  protected String url() {
    return PostgresServerProcess.shared().url();
  }

  @Override
  protected Optional<ServerControl> serverControl() {
    return Optional.of(PostgresServerProcess.shared());
  }
}
