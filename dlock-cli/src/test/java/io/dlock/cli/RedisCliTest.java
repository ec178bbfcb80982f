package io.dlock.cli;

import io.dlock.testkit.server.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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

  /**
   * The negative control of {@link #fourRunnersRunning25TimesEachNeverLoseAnIncrement} and of
   * {@link CliProcessesIT}'s four processes: the same four runners, each under a lock of its own,
   * lose increments within the smaller count of the two, so both counts catch a lock that does not
   * exclude.
   */
  @Test
  void fourRunnersOnLocksOfTheirOwnLoseIncrementsWithin10Each() throws Exception {
    CliChecks.fourRunnersOnLocksOfTheirOwnLoseIncrements(
        dir, "cli-" + java.util.UUID.randomUUID() + "-own", 10, args -> dlock(args[0], rest(args)));
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
