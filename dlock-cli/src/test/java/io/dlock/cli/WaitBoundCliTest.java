package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.testkit.TestTiming;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code dlock run --wait} bounds the connection too (issue 30, item 10): against a server that
 * accepts and never answers, {@code --wait 2s} took 6 s, the backend's own connect timeouts. A bare
 * number is seconds, as {@code flock -w} reads it.
 */
class WaitBoundCliTest {
  /** What the run may take past its wait: a thread's start and this JVM's scheduling. */
  private static final Duration MARGIN = TestTiming.millis(2_000);

  private final Cli cli = new InProcessCli();
  private SilentServer server;

  @BeforeAll
  static void loadTheCommandLine() {
    // Its classes loaded outside the measured runs: on a busy machine that alone takes seconds.
    new InProcessCli().run(TestTiming.millis(60_000), "run", "--help");
  }

  @BeforeEach
  void start() throws IOException {
    server = new SilentServer();
  }

  @AfterEach
  void stop() throws IOException {
    // Closes the connections too: the connection the run gave up on then fails at once.
    server.close();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "redis://127.0.0.1:%d",
        "zk://127.0.0.1:%d",
        "jdbc:postgresql://127.0.0.1:%d/test"
      })
  void aSilentServerGivesTheUnavailableStatusWithinTheWait(String form) {
    String uri = String.format(form, server.port());
    Cli.Result result =
        cli.run(
            TestTiming.millis(60_000),
            "run",
            "--backend",
            uri,
            "--name",
            "silent",
            "--wait",
            "2",
            "--",
            "true");
    assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(result.err()).contains("no connection to ").contains("within --wait 2s");
    // At the bound, not long after it; "--wait 2s" in the message: 2 is two seconds (read as
    // milliseconds, the bound would be the connection's floor, named apart).
    assertThat(result.took()).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    assertThat(result.took()).isLessThan(Duration.ofSeconds(2).plus(MARGIN));
    // The wait was spent on this server (the connection the run gave up on was made).
    await().atMost(TestTiming.millis(60_000)).until(() -> server.accepted() > 0);
  }
}
