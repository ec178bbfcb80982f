package io.dlock.cli;

import io.dlock.LockClients;
import io.dlock.testkit.server.RedisServerProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code dlock demo}: the flash sale across real OS processes, with and without the lock. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Show the flash sale oversell without the lock, and none with it.",
      "Buyer processes, each with several threads, sell a stock kept in a shared file.",
      "Each sale reads, checks, pays and writes: first with the lock, then without it.",
      "Without --backend it starts an embedded redis-server on a free loopback port.",
      "That server is the machine's or one from a Maven Central artifact: nothing to install."
    })
final class DemoCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin BackendOptions backend = new BackendOptions();

  @Option(
      names = "--stock",
      defaultValue = "100",
      description = "items in stock, 1 to 100000 (default: ${DEFAULT-VALUE})")
  int stock = 100;

  @Option(
      names = "--processes",
      defaultValue = "3",
      description = "buyer processes, 1 to 16 (default: ${DEFAULT-VALUE})")
  int processes = 3;

  @Option(
      names = "--buyers",
      defaultValue = "4",
      description = "buyer threads per process, 1 to 64 (default: ${DEFAULT-VALUE})")
  int buyers = 4;

  /** The outcome of one sale. */
  record Sale(int stock, List<Long> soldPerProcess, long stockLeft) {
    long sold() {
      return soldPerProcess.stream().mapToLong(Long::longValue).sum();
    }

    long oversold() {
      return Math.max(0, sold() - stock);
    }
  }

  @Override
  public Integer call() throws Exception {
    check("--stock", stock, 1, 100_000);
    check("--processes", processes, 1, 16);
    check("--buyers", buyers, 1, 64);
    PrintWriter out = spec.commandLine().getOut();
    String uri = backend.uriOrNull();
    RedisServerProcess embedded = null;
    if (uri == null) {
      embedded = RedisServerProcess.start();
      uri = embedded.uri();
      out.println("Backend: embedded redis-server on " + uri + " (" + embedded.binary() + ")");
    } else {
      out.println("Backend: " + LockClients.redact(uri));
    }
    try {
      out.printf(
          "Flash sale: %d items, %d processes x %d buyers, one item per purchase%n%n",
          stock, processes, buyers);
      out.flush();
      Sale withLock = sale(uri, true, out);
      Sale withoutLock = sale(uri, false, out);
      out.println();
      String format = "%-14s %-24s %6s %11s %9s%n";
      out.printf(format, "", "sold per process", "sold", "stock left", "oversold");
      out.printf(
          format,
          "with lock",
          withLock.soldPerProcess,
          withLock.sold(),
          withLock.stockLeft,
          withLock.oversold());
      out.printf(
          format,
          "without lock",
          withoutLock.soldPerProcess,
          withoutLock.sold(),
          withoutLock.stockLeft,
          withoutLock.oversold());
      out.println();
      boolean exact = withLock.sold() == stock && withLock.stockLeft == 0;
      out.println(
          exact
              ? "With the lock: sold "
                  + stock
                  + " of "
                  + stock
                  + ", nothing oversold."
                  + (withoutLock.oversold() > 0
                      ? " Without it: " + withoutLock.oversold() + " sold that did not exist."
                      : " Without it this time the race did not show; run again.")
              : "FAILED: with the lock, sold " + withLock.sold() + " of " + stock);
      out.flush();
      return exact ? ExitCodes.OK : ExitCodes.SOFTWARE;
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  private Sale sale(String uri, boolean locked, PrintWriter out)
      throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("dlock-demo-");
    try {
      StockFile file = new StockFile(dir.resolve("stock"));
      file.write(stock);
      long startAt = System.currentTimeMillis() + 1500; // time for the JVMs to start
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      List<Process> buyersProcesses = new ArrayList<>();
      List<Path> outputs = new ArrayList<>();
      for (int p = 0; p < processes; p++) {
        Path output = dir.resolve("buyer-" + p + ".out");
        outputs.add(output);
        List<String> command =
            new ArrayList<>(
                List.of(
                    java,
                    "-XX:TieredStopAtLevel=1",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Dlock.class.getName(),
                    "demo-buyer",
                    "--backend",
                    uri,
                    "--stock-file",
                    dir.resolve("stock").toString(),
                    "--buyers",
                    Integer.toString(buyers),
                    "--mode",
                    locked ? "locked" : "unlocked",
                    "--start-at",
                    Long.toString(startAt)));
        if (backend.config != null) {
          command.addAll(List.of("--config", backend.config.toString()));
        }
        buyersProcesses.add(
            new ProcessBuilder(command)
                .redirectOutput(output.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start());
      }
      out.print((locked ? "with lock:    " : "without lock: ") + "stock " + stock);
      long shown = stock;
      while (buyersProcesses.stream().anyMatch(Process::isAlive)) {
        long now = file.read();
        if (now != shown) {
          out.print(" " + now);
          out.flush();
          shown = now;
        }
        // Progress display only: sample the stock a few times a second while the buyers work.
        TimeUnit.MILLISECONDS.sleep(200);
      }
      out.println(" -> " + file.read());
      List<Long> sold = new ArrayList<>();
      for (int p = 0; p < processes; p++) {
        int exit = buyersProcesses.get(p).waitFor();
        @Nullable String result = null;
        for (String line : Files.readAllLines(outputs.get(p), StandardCharsets.UTF_8)) {
          if (line.startsWith("RESULT sold=")) {
            result = line.substring("RESULT sold=".length()).trim();
          }
        }
        if (exit != 0 || result == null) {
          throw new IllegalStateException(
              "buyer process " + p + " failed with exit status " + exit);
        }
        sold.add(Long.parseLong(result));
      }
      return new Sale(stock, sold, file.read());
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  private static void check(String option, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          option + " must be from " + min + " to " + max + ", but was " + value);
    }
  }
}
