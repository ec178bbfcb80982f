package io.dlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CI smoke test of the benchmark: runs the whole comparison in {@code --quick} mode, in
 * process, and checks that every table section was printed and the charts were written. It asserts
 * no timing: the figures of a quick run on a shared machine mean little.
 */
class QuickModeIT {

  @Test
  @Timeout(300)
  void quickModePrintsEveryTable() throws Exception {
    Path out = Path.of("target", "quick-report", "benchmarks.md");
    Files.createDirectories(out.getParent());
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    boolean ok;
    try (PrintStream tee = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
      System.setOut(tee);
      // The election and semaphore parts' rounds wait for leases to run out (5 and 3 rounds of 3 s
      // in --quick): one round of 1 s each here, and the semaphores' throughput in the lock
      // scenarios' short segments, keep the smoke test's cost to a few seconds.
      ok =
          BenchmarkMain.run(
              new String[] {"--quick", "--out", out.toString()},
              plan ->
                  plan.withElection(
                          new RunPlan.Election(1, Duration.ofSeconds(1), Duration.ofSeconds(2)))
                      .withSemaphores(
                          new RunPlan.Semaphores(
                              4,
                              1,
                              Duration.ofMillis(150),
                              Duration.ofMillis(100),
                              1,
                              Duration.ofSeconds(1),
                              Duration.ofSeconds(2))));
    } finally {
      System.setOut(original);
    }
    String printed = captured.toString(StandardCharsets.UTF_8);
    System.out.println(printed);

    assertThat(ok).isTrue();
    for (String section : MarkdownReport.SECTIONS) {
      assertThat(printed).as("section %s", section).contains(section);
      String body = sectionBody(printed, section);
      if (!body.startsWith("Skipped:")) {
        assertThat(body).as("table of %s", section).contains("|---");
      }
    }
    assertThat(printed).contains(Files.readString(out).strip());
    for (String chart : new String[] {"s1-latency.png", "s3-handoff-gap.png", "s4-commands.png"}) {
      assertThat(out.getParent().resolve("benchmarks").resolve(chart)).isNotEmptyFile();
    }
  }

  private static String sectionBody(String report, String heading) {
    int start = report.indexOf(heading) + heading.length();
    int next = report.indexOf("\n## ", start);
    return report.substring(start, next < 0 ? report.length() : next).strip();
  }
}
