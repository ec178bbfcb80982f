package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.testkit.TestTiming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database without dlock's lock table is a configuration problem, not an internal error (issue
 * 30, item 5): exit 78 and a message that says the command line's fix, createSchema=true in the
 * --config file or the DDL.
 */
class JdbcSetupCliTest {
  private final Cli cli = new InProcessCli();
  @TempDir Path dir;

  @Test
  void aMissingLockTableGivesTheConfigStatusAndTheFix() {
    // A fresh in-memory H2 database: reachable, and without any table.
    String uri = "jdbc:h2:mem:cli-" + UUID.randomUUID();
    assertNotSetUp(cli.run(TestTiming.millis(60_000), "status", "--backend", uri));
    assertNotSetUp(
        cli.run(
            TestTiming.millis(60_000),
            "run",
            "--backend",
            uri,
            "--name",
            "setup",
            "--wait",
            "0",
            "--",
            "true"));
  }

  @Test
  @EnabledIfEnvironmentVariable(
      named = "DLOCK_TEST_POSTGRES_URL",
      matches = ".+",
      disabledReason = "DLOCK_TEST_POSTGRES_URL is not set: no PostgreSQL to look for a table in")
  void aMissingLockTableOnPostgresGivesTheConfigStatusAndTheFix() throws IOException {
    Path config = dir.resolve("dlock.properties");
    Files.writeString(config, "table=cli_missing_" + UUID.randomUUID().toString().substring(0, 8));
    assertNotSetUp(
        cli.run(
            TestTiming.millis(60_000),
            "status",
            "--backend",
            System.getenv("DLOCK_TEST_POSTGRES_URL"),
            "--config",
            config.toString()));
  }

  private static void assertNotSetUp(Cli.Result result) {
    assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.CONFIG);
    assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
    assertThat(result.err())
        .contains("is not set up")
        .contains("createSchema=true in the --config file")
        .contains("DDL")
        .doesNotContain("internal error");
  }
}
