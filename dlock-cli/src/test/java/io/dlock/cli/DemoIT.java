package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/** {@code dlock demo} on its embedded default: exact with the lock, oversold without. */
class DemoIT {

  @Test
  void theDemoSellsExactlyTheStockWithTheLockAndShowsTheOversellWithout() throws Exception {
    try (RedisServerProcess training = RedisServerProcess.start()) {
      CliProcesses cli = new CliProcesses(Files.createTempDirectory("dlock-demo"), training.uri());
      CliProcesses.Result result =
          cli.run(
              TestTiming.millis(240_000),
              "demo",
              "--stock",
              "60",
              "--processes",
              "2",
              "--buyers",
              "3");
      assertThat(result.exit()).as(result.err()).isZero();
      assertThat(result.out())
          .contains("embedded redis-server")
          .containsPattern("with lock\\s+\\[\\d+, \\d+\\]\\s+60\\s+0\\s+0")
          .contains("sold 60 of 60, nothing oversold");
    }
  }
}
