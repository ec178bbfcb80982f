package io.dlock.cli;

import io.dlock.testkit.server.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The command line against a redis-server the test starts on a free loopback port. */
class RedisCliTest extends CliContract {
  private static RedisServerProcess redis;

  @BeforeAll
  static void start() throws Exception {
    redis = RedisServerProcess.start();
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
}
