package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.testkit.TestTiming;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code dlock run --wait} bounds the connection too (issue 30, item 10): against a server that
 * accepts and never answers, {@code --wait 2s} took 6 to 30 s, the backend's own connect timeouts.
 * A bare number is seconds, as {@code flock -w} reads it.
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
    // Closes the connections too: the connections the runs gave up on then fail at once.
    server.close();
  }

  @Test
  void aSilentServerGivesTheUnavailableStatusWithinTheWait() throws Exception {
    List<String> uris =
        List.of(
            "redis://127.0.0.1:" + server.port(),
            "zk://127.0.0.1:" + server.port(),
            "jdbc:postgresql://127.0.0.1:" + server.port() + "/test");
    // Side by side: each run is measured on its own, and the test waits once, not once a backend.
    ExecutorService runs = Executors.newFixedThreadPool(uris.size());
    try {
      List<Future<Cli.Result>> results = new ArrayList<>();
      for (String uri : uris) {
        results.add(
            runs.submit(
                () ->
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
                        "true")));
      }
      for (Future<Cli.Result> future : results) {
        Cli.Result result = future.get(1, TimeUnit.MINUTES);
        assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.UNAVAILABLE);
        // "--wait 2s": 2 is two seconds (read as milliseconds, the bound would be the
        // connection's floor, named apart).
        assertThat(result.err()).contains("no connection to ").contains("within --wait 2s");
        // At the bound, not long after it.
        assertThat(result.took()).as(result.err()).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(result.took()).as(result.err()).isLessThan(Duration.ofSeconds(2).plus(MARGIN));
      }
    } finally {
      runs.shutdownNow();
    }
    // The wait was spent on this server (the connections the runs gave up on were made).
    await().atMost(TestTiming.millis(60_000)).until(() -> server.accepted() >= uris.size());
  }
}
