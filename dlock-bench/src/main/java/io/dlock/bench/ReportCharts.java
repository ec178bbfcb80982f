package io.dlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The report's three charts: the series the comparisons add while they run, the PNG files drawn
 * from them (with {@link Charts}) in a folder beside the report, and the section that shows them.
 */
final class ReportCharts {
  /** The folder, beside the report, that holds the charts; the report links them relative. */
  private static final String FOLDER = "benchmarks";

  private static final String S1_LATENCY = "s1-latency.png";
  private static final String S3_GAP = "s3-handoff-gap.png";
  private static final String S4_COMMANDS = "s4-commands.png";

  private final Map<String, Histogram> s1Latency = new LinkedHashMap<>();
  private final Map<String, Histogram> s3Gap = new LinkedHashMap<>();
  private final Map<String, double[][]> s4Series = new LinkedHashMap<>();

  /** S1's acquire + release latency of one contender, labelled with its backend. */
  void addS1Latency(String label, Histogram latency) {
    s1Latency.put(label, latency);
  }

  /** S3's hand-off gap of one contender, labelled with its backend. */
  void addS3Gap(String label, Histogram gap) {
    s3Gap.put(label, gap);
  }

  /** One line of S4: {held locks, value per second} as two rows of points. */
  void addS4Series(String label, double[][] points) {
    s4Series.put(label, points);
  }

  /** Draws the charts into the folder beside {@code report}, creating it. */
  void write(Path report) throws IOException {
    Path dir = report.toAbsolutePath().getParent().resolve(FOLDER);
    Files.createDirectories(dir);
    Charts.percentiles(
        dir.resolve(S1_LATENCY),
        "S1: acquire + release latency, one thread, uncontended",
        "latency (µs, log)",
        s1Latency);
    Charts.percentiles(
        dir.resolve(S3_GAP),
        "S3: hand-off gap, 16 threads on one key",
        "release start to next acquire return (µs, log)",
        s3Gap);
    Charts.lines(
        dir.resolve(S4_COMMANDS),
        "S4: Redis commands and requests per second while holding N locks with renewal",
        "held locks (log)",
        "per second (log)",
        s4Series);
  }

  /** The Charts section, linking the files {@link #write} draws. */
  String section() {
    return "## Charts\n\n"
        + image("S1 latency", S1_LATENCY)
        + image("S3 hand-off gap", S3_GAP)
        + image("S4 commands per second", S4_COMMANDS);
  }

  private static String image(String alt, String file) {
    return "![" + alt + "](" + FOLDER + "/" + file + ")\n\n";
  }
}
