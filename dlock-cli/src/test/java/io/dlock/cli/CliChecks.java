package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.testkit.TestTiming;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Checks both command-line suites make, in process ({@link CliContract}) and with real processes
 * ({@link CliProcessesIT}); {@code dlock} runs {@code dlock ARGS...} against the suite's backend.
 */
final class CliChecks {
  private CliChecks() {}

  /**
   * Four runners of {@code dlock run}, {@code times} each, add one to a counter in a file under one
   * lock (read, wait a little, write back): without the lock, increments get lost ({@link
   * #fourRunnersOnLocksOfTheirOwnLoseIncrements}, the negative control, shows that this count
   * catches it).
   */
  static void fourRunnersLoseNoIncrement(
      Path dir, String name, int times, Function<String[], Cli.Result> dlock) throws Exception {
    assertThat(fourRunnersCount(dir, runner -> name, times, dlock))
        .isEqualTo(Integer.toString(4 * times));
  }

  /**
   * The negative control of {@link #fourRunnersLoseNoIncrement}: the same runners, each under a
   * lock of its own (so under none that the others take), lose increments within the same count.
   */
  static void fourRunnersOnLocksOfTheirOwnLoseIncrements(
      Path dir, String name, int times, Function<String[], Cli.Result> dlock) throws Exception {
    assertThat(Integer.parseInt(fourRunnersCount(dir, runner -> name + "-" + runner, times, dlock)))
        .isLessThan(4 * times);
  }

  /** Runs the four runners, runner {@code r} under lock {@code nameOf(r)}; the counter's text. */
  private static String fourRunnersCount(
      Path dir,
      java.util.function.IntFunction<String> nameOf,
      int times,
      Function<String[], Cli.Result> dlock)
      throws Exception {
    Path counter = dir.resolve("counter");
    Files.writeString(counter, "0");
    String script = "n=$(cat '" + counter + "'); sleep 0.01; echo $((n+1)) > '" + counter + "'";
    ExecutorService runners = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<Integer>>> results = new ArrayList<>();
      for (int p = 0; p < 4; p++) {
        String name = nameOf.apply(p);
        results.add(
            runners.submit(
                () -> {
                  List<Integer> exits = new ArrayList<>();
                  for (int i = 0; i < times; i++) {
                    exits.add(
                        dlock
                            .apply(
                                new String[] {
                                  "run", "--name", name, "--wait", "60s", "--", "sh", "-c", script
                                })
                            .exit());
                  }
                  return exits;
                }));
      }
      for (Future<List<Integer>> result : results) {
        assertThat(result.get(10, TimeUnit.MINUTES)).containsOnly(0);
      }
    } finally {
      runners.shutdownNow();
    }
    return Files.readString(counter).trim();
  }

  /** Waits until {@code dlock status} shows the lock held. */
  static void awaitHeld(String name, Function<String[], Cli.Result> dlock) {
    await()
        .atMost(TestTiming.millis(60_000))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                dlock
                    .apply(new String[] {"status", name, "--json"})
                    .out()
                    .contains("\"" + name + "\""));
  }
}
