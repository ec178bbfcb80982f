package io.dlock.cli;

import io.dlock.testkit.server.RedisServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The command line against a redis-server the test starts on a free loopback port. */
class RedisCliIT extends CliContractIT {
  private static RedisServerProcess redis;
  private static CliProcesses cli;

  @BeforeAll
  static void start() throws Exception {
    redis = RedisServerProcess.start();
    cli = new CliProcesses(Files.createTempDirectory("dlock-cli-redis"), redis.uri());
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  @Override
  protected String backendUri() {
    return redis.uri();
  }

  @Override
  protected void deleteLockOnServer(String name) {
    redis.command("DEL", "dlock:{" + name + "}");
  }

  @Override
  protected CliProcesses cli() {
    return cli;
  }

  static Path unused() {
    return Path.of(".");
  }
}
