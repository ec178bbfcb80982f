package io.dlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The whole comparison in one run: dlock next to the physical limit and the peers (Redisson,
 * Curator, ShedLock) on servers it starts itself, printed as Markdown and, with {@code --out},
 * written to a report with PNG charts beside it.
 *
 * <pre>
 * java -jar dlock-bench/target/dlock-bench.jar [--quick] [--out docs/benchmarks.md]
 * </pre>
 */
public final class BenchmarkMain {
  private BenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    System.exit(run(args) ? 0 : 1);
  }

  /**
   * Runs the comparison; returns true with the report printed (and written with --out), false after
   * printing the usage when an argument is unknown.
   */
  public static boolean run(String[] args) throws Exception {
    return run(args, UnaryOperator.identity());
  }

  /**
   * As {@link #run(String[])}, with the plan the arguments chose adjusted first: the CI smoke test
   * shortens the leader-election and semaphore parts, whose rounds wait for leases to run out.
   */
  static boolean run(String[] args, UnaryOperator<RunPlan> adjust) throws Exception {
    Optional<CommandLineOptions> options = CommandLineOptions.parse(args);
    if (options.isEmpty()) {
      System.err.println(CommandLineOptions.USAGE);
      return false;
    }
    System.setProperty("java.awt.headless", "true");
    System.setProperty("zookeeper.admin.enableServer", "false");
    Path out = options.get().out();
    String report = runAll(args, adjust.apply(options.get().plan()), out);
    System.out.println(report);
    if (out != null) {
      Files.writeString(out, report);
      System.err.println("Report written to " + out.toAbsolutePath());
    }
    return true;
  }

  private static String runAll(String[] args, RunPlan plan, Path out) throws Exception {
    MarkdownReport report = new MarkdownReport(plan);
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    try (MachineLoad load = new MachineLoad()) {
      RedisComparison.run(plan, report);
      HeldLocksComparison.run(plan, report);
      ZooKeeperComparison.run(plan, report);
      JdbcComparison.run(plan, report);
      ClientConfigurations.run(plan, report);
      VirtualThreadWaiters.run(plan, report);
      ElectionComparison.run(plan, report);
      SemaphoreComparison.run(plan, report);
      if (out != null) {
        report.charts().write(out);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - t0).truncatedTo(ChronoUnit.SECONDS);
      // Read the notes only now, so that notes edited while the run goes on are kept.
      return report.assemble(
          args, started, took, load.summary(), out != null, MarkdownReport.existingNotes(out));
    }
  }

  private static final long STARTED = System.nanoTime();

  /**
   * A line on standard error with the seconds since the start, so that a long run shows where it is
   * (and where its time goes) without touching the report.
   */
  static void progress(String what) {
    System.err.printf("[dlock-bench] %6.1f s  %s%n", (System.nanoTime() - STARTED) / 1e9, what);
  }
}
