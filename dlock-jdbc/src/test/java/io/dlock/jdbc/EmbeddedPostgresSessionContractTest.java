package io.dlock.jdbc;

import io.dlock.testkit.ServerControl;
import io.dlock.testkit.server.PostgresServerProcess;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The contract suite on the embedded PostgreSQL, session locks, when an external one is configured:
 * the smoke of {@link EmbeddedPostgresSmoke} only, as {@link PostgresSessionContractTest} runs the
 * whole suite on the external server. Skipped without one.
 */
@ExtendWith(EmbeddedPostgresSmoke.class)
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
  protected Optional<ServerControl> serverControl() {
    return Optional.of(PostgresServerProcess.shared());
  }
}
