package io.dlock.cli;

import io.dlock.LockClient;
import io.dlock.LockClients;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The command line against the PostgreSQL named by {@code DLOCK_TEST_POSTGRES_URL} (CI sets it to
 * the machine's server); skipped with that reason when it is not set.
 */
@EnabledIfEnvironmentVariable(
    named = "DLOCK_TEST_POSTGRES_URL",
    matches = ".+",
    disabledReason = "DLOCK_TEST_POSTGRES_URL is not set: no PostgreSQL to run the command against")
class PostgresCliTest extends CliContract {
  private static LockClient admin;

  @BeforeAll
  static void start() throws Exception {
    // Creates the lock tables if this database has none yet; the dlock processes then use them.
    admin =
        LockClients.connect(
            uri(), java.util.Map.of("createSchema", "true"), io.dlock.LockClientOptions.defaults());
  }

  @AfterAll
  static void stop() {
    admin.close();
  }

  private static String uri() {
    return System.getenv("DLOCK_TEST_POSTGRES_URL");
  }

  @Override
  protected String backendUri() {
    return uri();
  }

  @Override
  protected void deleteLockOnServer(String name) {
    admin.forceRelease(name);
  }
}
