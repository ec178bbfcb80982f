package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.dlock.testkit.TestTiming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code --config} key the backend does not read is refused at start (issue 30, item 1): the
 * backends skip keys they do not know, so a misspelt setting did nothing, silently. The backend is
 * a server that never answers and counts the connections it gets: a refusal before connecting
 * leaves it none.
 */
class ConfigKeysCliTest {
  private final Cli cli = new InProcessCli();
  @TempDir Path dir;
  private SilentServer server;

  @BeforeEach
  void start() throws IOException {
    server = new SilentServer();
  }

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void aMisspeltKeyIsRefusedAtStartNamingItAndTheClosestKnownKey() throws IOException {
    Cli.Result jdbc =
        run("jdbc:postgresql://127.0.0.1:" + server.port() + "/test", "createschema=true");
    assertRefused(jdbc, "'createschema'", "did you mean 'createSchema'?");

    Cli.Result redis = run("redis://127.0.0.1:" + server.port(), "keyprefx=jobs:");
    assertRefused(redis, "'keyprefx'", "did you mean 'keyPrefix'?");

    Cli.Result zookeeper = run("zk://127.0.0.1:" + server.port(), "sessionTimout=PT10S");
    assertRefused(zookeeper, "'sessionTimout'", "did you mean 'sessionTimeout'?");
  }

  @Test
  void aKeyOfAnotherBackendIsRefusedWithTheKnownKeys() throws IOException {
    // Redlock reads its credentials from the URI only: a password here would be dropped.
    Cli.Result redlock = run("redlock://127.0.0.1:" + server.port(), "password=secret");
    assertRefused(redlock, "'password'", "Known keys: backend, keyPrefix, nodeTimeout");
    assertThat(redlock.err()).contains("credentials in the URI").doesNotContain("secret");

    Cli.Result unrelated = run("redis://127.0.0.1:" + server.port(), "colour=blue");
    assertRefused(unrelated, "'colour'", "Known keys: backend, commandTimeout, keyPrefix");
    assertThat(unrelated.err()).doesNotContain("did you mean");
  }

  @Test
  void theBackendsOwnKeysPassTheCheck() {
    Map<String, String> zookeeper =
        Map.of(
            "backend", "zk://h:1",
            "username", "u",
            "password", "p",
            "acl", "digest",
            "sessionTimeout", "PT10S",
            "connectionTimeout", "PT5S",
            "followEnsembleChanges", "true",
            "ownerIdsSharedAcrossClients", "false");
    Map<String, String> jdbc =
        Map.of(
            "username", "u",
            "password", "p",
            "mode", "row",
            "table", "t",
            "createSchema", "true",
            "database", "mysql");
    Path file = dir.resolve("dlock.properties");
    assertThatCode(
            () -> {
              ConfigKeys.check("zk://h:1", zookeeper, file);
              ConfigKeys.check("jdbc:h2:mem:x", jdbc, file);
              ConfigKeys.check(
                  "rediss://h", Map.of("username", "u", "password", "p", "keyPrefix", "k"), file);
              ConfigKeys.check(
                  "redis://h", Map.of("commandTimeout", "PT2S", "backend", "redis://h"), file);
              ConfigKeys.check(
                  "redlock://h:1,h:2,h:3", Map.of("keyPrefix", "k", "nodeTimeout", "PT1S"), file);
            })
        .doesNotThrowAnyException();
  }

  /** {@code dlock run} with a --config file of {@code lines}, its backend {@code uri}. */
  private Cli.Result run(String uri, String... lines) throws IOException {
    Path config = Files.createTempFile(dir, "dlock", ".properties");
    Files.writeString(config, "backend=" + uri + "\n" + String.join("\n", lines) + "\n");
    return cli.run(
        TestTiming.millis(60_000),
        "run",
        "--config",
        config.toString(),
        "--name",
        "config-keys",
        "--wait",
        "30s",
        "--",
        "true");
  }

  private void assertRefused(Cli.Result result, String key, String hint) {
    assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
    assertThat(result.err())
        .contains("--config")
        .contains("unknown key " + key)
        .contains(hint)
        .doesNotContain("Exception");
    assertThat(server.accepted()).as("connections made").isZero();
  }
}
