package io.dlock.examples;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.redis.RedisLocks;
import io.dlock.testkit.server.RedisServerProcess;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The flash sale from the articles, run for real: first two buyers on separate clients (4 in stock,
 * A wants 3, B wants 2), then several buyer processes selling out a larger stock. Each runs once
 * with the lock and once without, so that the oversell is visible.
 *
 * <p>With no {@code --redis} option it starts its own redis-server on a free loopback port (the
 * machine's, or the one shipped in a Maven Central artifact), so it needs nothing installed.
 */
public final class FlashSaleDemo {

  /** The result of the two-buyer scenario. */
  record TwoBuyers(boolean aBought, boolean bBought, long stockLeft) {
    int successes() {
      return (aBought ? 1 : 0) + (bBought ? 1 : 0);
    }
  }

  /** The result of the multi-process scenario. */
  record Sale(
      long stock, List<Long> soldPerProcess, long stockLeft, long minStockSeen, long tookMillis) {

    /** Purchases per second, from the first sale to the last. */
    double salesPerSecond() {
      return tookMillis <= 0 ? 0 : sold() * 1000.0 / tookMillis;
    }

    long sold() {
      return soldPerProcess.stream().mapToLong(Long::longValue).sum();
    }

    long oversold() {
      return Math.max(0, sold() - stock);
    }

    boolean exact() {
      return sold() == stock && stockLeft == 0 && minStockSeen >= 0;
    }
  }

  private FlashSaleDemo() {}

  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("flash-sale: " + e.getMessage());
      System.err.println(Options.USAGE);
      System.exit(64);
      return;
    }
    PrintStream out = System.out;
    RedisServerProcess embedded = null;
    String uri = options.redisUri;
    if (uri == null) {
      embedded = RedisServerProcess.start();
      uri = embedded.uri();
      out.println("Started redis-server (" + embedded.binary() + ") on " + uri);
    }
    boolean ok;
    try {
      ok = run(uri, options, out);
      out.println(
          ok ? "OK: with the lock, sold equals stock and stock never went negative." : "FAILED");
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
    System.exit(ok ? 0 : 1);
  }

  static boolean run(String uri, Options options, PrintStream out) throws Exception {
    out.println();
    out.println("== Two buyers, separate clients: 4 in stock, A wants 3, B wants 2 ==");
    TwoBuyers locked = twoBuyers(uri, true);
    TwoBuyers unlocked = twoBuyers(uri, false);
    out.printf("%-14s %-8s %-8s %10s %10s%n", "", "A (3)", "B (2)", "sold", "stock left");
    for (var row : List.of(List.of("with lock", locked), List.of("without lock", unlocked))) {
      TwoBuyers r = (TwoBuyers) row.get(1);
      out.printf(
          "%-14s %-8s %-8s %10d %10d%n",
          row.get(0),
          r.aBought ? "bought" : "refused",
          r.bBought ? "bought" : "refused",
          (r.aBought ? 3 : 0) + (r.bBought ? 2 : 0),
          r.stockLeft);
    }

    out.println();
    out.printf(
        "== Load: %d items, %d processes x %d buyers, one item per purchase ==%n",
        options.stock, options.processes, options.buyers);
    Sale withLock = sale(uri, "locked", options, out);
    Sale withoutLock = sale(uri, "unlocked", options, out);
    Sale lockFree = sale(uri, "conditional", options, out);
    out.printf(
        "%-14s %-22s %6s %11s %9s %8s%n",
        "", "sold per process", "sold", "stock left", "oversold", "sales/s");
    for (var row :
        List.of(
            List.of("with lock", withLock),
            List.of("without lock", withoutLock),
            List.of("lock-free", lockFree))) {
      Sale s = (Sale) row.get(1);
      out.printf(
          "%-14s %-22s %6d %11d %9d %8.0f%n",
          row.get(0), s.soldPerProcess, s.sold(), s.stockLeft, s.oversold(), s.salesPerSecond());
    }
    out.println();
    out.println(
        "lock-free = one atomic conditional decrement per purchase (if stock >= n then DECRBY):"
            + " no lock, no oversell.");
    return locked.successes() == 1 && locked.stockLeft >= 0 && withLock.exact() && lockFree.exact();
  }

  /** A and B buy concurrently from two separate lock clients (two "servers" of the shop). */
  static TwoBuyers twoBuyers(String uri, boolean useLock) throws Exception {
    String sku = "sku-4-" + (useLock ? "locked" : "unlocked");
    try (Store setup = new Store(uri, sku)) {
      setup.setStock(4);
    }
    CountDownLatch start = new CountDownLatch(1);
    CompletableFuture<Boolean> a = buyer(uri, sku, 3, useLock, start);
    CompletableFuture<Boolean> b = buyer(uri, sku, 2, useLock, start);
    start.countDown();
    boolean aBought = a.get(60, TimeUnit.SECONDS);
    boolean bBought = b.get(60, TimeUnit.SECONDS);
    try (Store check = new Store(uri, sku)) {
      return new TwoBuyers(aBought, bBought, check.stock());
    }
  }

  private static CompletableFuture<Boolean> buyer(
      String uri, String sku, long items, boolean useLock, CountDownLatch start) {
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try (LockClient locks = RedisLocks.newClient(uri);
                  Store store = new Store(uri, sku)) {
                start.await();
                OptionalLong left;
                Duration payment = Duration.ofMillis(50);
                if (useLock) {
                  try (Lease lease =
                      locks.lock("flash-sale:" + sku).acquire(Duration.ofSeconds(30))) {
                    left = store.buy(items, payment);
                  }
                } else {
                  left = store.buy(items, payment);
                }
                result.complete(left.isPresent());
              } catch (Exception e) {
                result.completeExceptionally(e);
              }
            });
    thread.start();
    return result;
  }

  /** Runs the buyer processes and collects their results. */
  static Sale sale(String uri, boolean useLock, Options options, PrintStream out)
      throws IOException, InterruptedException {
    return sale(uri, useLock ? "locked" : "unlocked", options, out);
  }

  /** Runs the buyer processes in {@code mode} (locked, unlocked, conditional). */
  static Sale sale(String uri, String mode, Options options, PrintStream out)
      throws IOException, InterruptedException {
    try (Store store = new Store(uri, BuyerProcess.SKU)) {
      store.setStock(options.stock);
      long startAt = System.currentTimeMillis() + 1500; // JVM start-up of the buyer processes
      List<Process> processes = new ArrayList<>();
      List<Path> outputs = new ArrayList<>();
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      for (int p = 0; p < options.processes; p++) {
        Path output = Files.createTempFile("dlock-buyer-", ".out");
        output.toFile().deleteOnExit();
        outputs.add(output);
        processes.add(
            new ProcessBuilder(
                    java,
                    "-cp",
                    System.getProperty("java.class.path"),
                    BuyerProcess.class.getName(),
                    uri,
                    mode,
                    Integer.toString(options.buyers),
                    Long.toString(startAt))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectOutput(output.toFile())
                .start());
      }
      out.print(String.format("%-14s", mode + ":") + "stock");
      long shown = Long.MIN_VALUE;
      while (processes.stream().anyMatch(Process::isAlive)) {
        long now = store.stock();
        if (now != shown) {
          out.print(" " + now);
          out.flush();
          shown = now;
        }
        // Progress display only: sample the stock a few times a second while the buyers work.
        TimeUnit.MILLISECONDS.sleep(150);
      }
      out.println(" -> " + store.stock());
      List<Long> sold = new ArrayList<>();
      long minStock = Long.MAX_VALUE;
      long firstSale = Long.MAX_VALUE;
      long lastSale = Long.MIN_VALUE;
      for (int p = 0; p < processes.size(); p++) {
        Process process = processes.get(p);
        int exit = process.waitFor();
        String line = resultLine(outputs.get(p));
        if (exit != 0 || line == null) {
          throw new IllegalStateException(
              "A buyer process failed (exit " + process.exitValue() + ")");
        }
        sold.add(Long.parseLong(field(line, "sold")));
        if (Long.parseLong(field(line, "sold")) > 0) {
          firstSale = Math.min(firstSale, Long.parseLong(field(line, "first")));
          lastSale = Math.max(lastSale, Long.parseLong(field(line, "last")));
        }
        minStock = Math.min(minStock, Long.parseLong(field(line, "minStock")));
      }
      // Throughput from the first sale to the last one, whatever the processes' start-up took.
      return new Sale(
          options.stock, sold, store.stock(), minStock, Math.max(1, lastSale - firstSale));
    }
  }

  private static String resultLine(Path output) throws IOException {
    String result = null;
    for (String line : Files.readAllLines(output, StandardCharsets.UTF_8)) {
      if (line.startsWith("RESULT ")) {
        result = line;
      }
    }
    return result;
  }

  private static String field(String line, String name) {
    for (String part : line.split(" ")) {
      if (part.startsWith(name + "=")) {
        return part.substring(name.length() + 1);
      }
    }
    throw new IllegalStateException("No " + name + " in '" + line + "'");
  }

  /** Command-line options. */
  static final class Options {
    static final String USAGE =
        "usage: flash-sale [--redis redis://host:port] [--stock 1..100000] [--processes 2..16]"
            + " [--buyers 1..64]";

    String redisUri;
    long stock = 100;
    int processes = 2;
    int buyers = 4;

    static Options parse(String[] args) {
      Options options = new Options();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("option " + arg + " needs a value");
        }
        String value = args[++i];
        switch (arg) {
          case "--redis" -> options.redisUri = value;
          case "--stock" -> options.stock = number("--stock", value, 1, 100_000);
          case "--processes" -> options.processes = (int) number("--processes", value, 2, 16);
          case "--buyers" -> options.buyers = (int) number("--buyers", value, 1, 64);
          default -> throw new IllegalArgumentException("unknown option " + arg);
        }
      }
      return options;
    }

    private static long number(String option, String value, long min, long max) {
      long n;
      try {
        n = Long.parseLong(value);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            option + " must be a whole number, but was '" + value + "'");
      }
      if (n < min || n > max) {
        throw new IllegalArgumentException(
            option + " must be from " + min + " to " + max + ", but was " + n);
      }
      return n;
    }
  }
}
