import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Prints each module's tests after a build: run, failed, skipped, and the time its test classes
 * took (summed over classes: with several test JVMs a module's wall time is less; Maven's reactor
 * summary above gives that). Run from the project's root: {@code java .ci/TestTable.java}. The
 * last line is the whole build's count, "N passed, N failed, N skipped".
 */
public class TestTable {
  private static final Pattern SUITE = Pattern.compile("<testsuite\\s[^>]*>");

  public static void main(String[] args) throws IOException {
    List<Path> modules;
    try (Stream<Path> dirs = Files.list(Path.of("."))) {
      modules =
          dirs.filter(d -> Files.isDirectory(d.resolve("target")))
              .filter(d -> Files.isRegularFile(d.resolve("pom.xml")))
              .sorted()
              .toList();
    }
    long passed = 0;
    long failed = 0;
    long skipped = 0;
    System.out.println();
    System.out.printf(
        Locale.ROOT, "%-28s %7s %7s %7s %10s%n", "module", "run", "failed", "skipped", "test time");
    for (Path module : modules) {
      long[] sums = new long[3];
      double seconds = 0;
      for (String reports : List.of("surefire-reports", "failsafe-reports")) {
        Path dir = module.resolve("target").resolve(reports);
        if (!Files.isDirectory(dir)) {
          continue;
        }
        List<Path> files;
        try (Stream<Path> listed = Files.list(dir)) {
          files =
              listed
                  .filter(p -> p.getFileName().toString().matches("TEST-.*\\.xml"))
                  .sorted()
                  .toList();
        }
        for (Path file : files) {
          Matcher suite = SUITE.matcher(Files.readString(file));
          if (!suite.find()) {
            continue;
          }
          String head = suite.group();
          if (number(head, "tests") == 0) {
            continue; // an enclosing class of @Nested ones: its time is theirs
          }
          sums[0] += number(head, "tests");
          sums[1] += number(head, "failures") + number(head, "errors");
          sums[2] += number(head, "skipped");
          seconds += decimal(head, "time");
        }
      }
      if (sums[0] == 0) {
        continue;
      }
      passed += sums[0] - sums[1] - sums[2];
      failed += sums[1];
      skipped += sums[2];
      System.out.printf(
          Locale.ROOT,
          "%-28s %7d %7d %7d %9.0fs%n",
          module.getFileName(),
          sums[0],
          sums[1],
          sums[2],
          seconds);
    }
    System.out.printf(Locale.ROOT, "Tests: %d passed, %d failed, %d skipped%n", passed, failed, skipped);
  }

  private static long number(String head, String attribute) {
    return Math.round(decimal(head, attribute));
  }

  private static double decimal(String head, String attribute) {
    Matcher m = Pattern.compile("\\s" + attribute + "=\"([0-9.,]+)\"").matcher(head);
    return m.find() ? Double.parseDouble(m.group(1).replace(",", "")) : 0;
  }
}
