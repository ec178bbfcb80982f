package io.dlock.bench;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The command line: {@code --quick} for the smoke run, {@code --out FILE} to write the report (and
 * its charts beside it) as well as print it; {@code out} is null when the report is only printed.
 */
record CommandLineOptions(boolean quick, Path out) {
  static final String USAGE =
      "usage: java -jar dlock-bench.jar [--quick] [--out docs/benchmarks.md]";

  /** The options, or empty at the first argument it does not know (print {@link #USAGE} then). */
  static Optional<CommandLineOptions> parse(String[] args) {
    boolean quick = false;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--out" -> {
          if (i + 1 == args.length) {
            return Optional.empty(); // --out without its file
          }
          out = Path.of(args[++i]);
        }
        default -> {
          return Optional.empty();
        }
      }
    }
    return Optional.of(new CommandLineOptions(quick, out));
  }

  RunPlan plan() {
    return quick ? RunPlan.quickPlan() : RunPlan.fullPlan();
  }
}
