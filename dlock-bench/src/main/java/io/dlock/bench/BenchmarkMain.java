package io.dlock.bench;

import io.dlock.bench.Scenarios.Kind;
import io.dlock.bench.Scenarios.Result;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.HdrHistogram.Histogram;
import org.apache.curator.test.TestingServer;

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
  /** The command the report documents. */
  static final String COMMAND =
      "./mvnw -B -q -DskipTests package -pl dlock-bench -am"
          + " && java -jar dlock-bench/target/dlock-bench.jar --out docs/benchmarks.md";

  /** The headings of every table section; the smoke test checks that each was printed. */
  public static final List<String> SECTIONS =
      List.of(
          "## Targets",
          "## Redis S1: one thread, one key, uncontended",
          "## Redis S2: 16 threads, distinct keys",
          "## Redis S3: 16 threads, one key",
          "## S4: holding many locks with automatic renewal",
          "## S5: waiters on one lock",
          "## S6: heap for 100,000 held leases",
          "## ZooKeeper",
          "## JDBC lease row on PostgreSQL");

  private static final String NOTES_BEGIN = "<!-- notes:begin -->";
  private static final String NOTES_END = "<!-- notes:end -->";

  /** Durations and counts of one mode. */
  record Plan(
      boolean quick,
      int rounds,
      Duration segment,
      Duration warmup,
      int threads,
      int[] heldSizes,
      Duration hold,
      Duration renewedLease,
      int[] waiterSizes,
      int maxHandoffs,
      int heapLeases) {

    static Plan fullPlan() {
      return new Plan(
          false,
          5,
          Duration.ofSeconds(2),
          Duration.ofSeconds(1),
          16,
          new int[] {1_000, 10_000},
          Duration.ofSeconds(60),
          Duration.ofSeconds(30),
          new int[] {10, 100, 1_000},
          200,
          100_000);
    }

    static Plan quickPlan() {
      return new Plan(
          true,
          2,
          Duration.ofMillis(300),
          Duration.ofMillis(200),
          16,
          new int[] {100, 1_000},
          Duration.ofSeconds(3),
          Duration.ofMillis(1500),
          new int[] {10, 100, 1_000},
          20,
          10_000);
    }
  }

  private final Plan plan;
  private final Map<String, StringBuilder> sections = new LinkedHashMap<>();
  private final List<String[]> targets = new ArrayList<>();
  private final Map<String, Histogram> s1Latency = new LinkedHashMap<>();
  private final Map<String, Histogram> s3Gap = new LinkedHashMap<>();
  private final Map<String, double[][]> s4Series = new LinkedHashMap<>();
  private final Map<String, String> versions = new LinkedHashMap<>();

  private BenchmarkMain(Plan plan) {
    this.plan = plan;
    for (String s : SECTIONS) {
      sections.put(s, new StringBuilder());
    }
  }

  public static void main(String[] args) throws Exception {
    System.exit(run(args) ? 0 : 1);
  }

  /** Runs the comparison; returns normally with the report printed (and written with --out). */
  public static boolean run(String[] args) throws Exception {
    boolean quick = false;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--out" -> out = Path.of(args[++i]);
        default -> {
          System.err.println(
              "usage: java -jar dlock-bench.jar [--quick] [--out docs/benchmarks.md]");
          return false;
        }
      }
    }
    System.setProperty("java.awt.headless", "true");
    System.setProperty("zookeeper.admin.enableServer", "false");
    BenchmarkMain bench = new BenchmarkMain(quick ? Plan.quickPlan() : Plan.fullPlan());
    String report = bench.runAll(args, out);
    System.out.println(report);
    if (out != null) {
      Files.writeString(out, report);
      System.err.println("Report written to " + out.toAbsolutePath());
    }
    return true;
  }

  private String runAll(String[] args, Path out) throws Exception {
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    try (MachineLoad load = new MachineLoad()) {
      redis();
      heldLocks();
      zookeeper();
      jdbc();
      Path chartDir = null;
      if (out != null) {
        chartDir = out.toAbsolutePath().getParent().resolve("benchmarks");
        Files.createDirectories(chartDir);
        charts(chartDir);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - t0).truncatedTo(ChronoUnit.SECONDS);
      // Read the notes only now, so that notes edited while the run goes on are kept.
      return assemble(args, started, took, load.summary(), chartDir != null, existingNotes(out));
    }
  }

  private static void progress(String what) {
    System.err.println("[dlock-bench] " + what);
  }

  // ------------------------------------------------------------------ Redis S1, S2, S3

  private void redis() throws Exception {
    List<RedisAdmin> servers = new ArrayList<>();
    List<Locker> lockers = new ArrayList<>();
    Map<Locker, RedisAdmin> admins = new LinkedHashMap<>();
    try {
      for (int i = 0; i < 4; i++) {
        servers.add(RedisAdmin.startServer());
      }
      versions.put("Redis server", servers.get(0).version());
      // Two clients per contender: the 16 threads of S3 come from two "processes".
      lockers.add(new RedisLockers.Limit(servers.get(0).uri()));
      lockers.add(new RedisLockers.Dlock(servers.get(1).uri(), 2));
      lockers.add(new RedisLockers.RedissonLocker(servers.get(2).uri(), 2, false));
      lockers.add(new RedisLockers.RedissonLocker(servers.get(3).uri(), 2, true));
      for (int i = 0; i < 4; i++) {
        admins.put(lockers.get(i), servers.get(i));
      }
      Locker limit = lockers.get(0);
      Locker dlock = lockers.get(1);
      List<Locker> redisson = lockers.subList(2, 4);

      progress("Redis S1");
      Map<Locker, Result> s1 = scenario(Kind.SOLO, lockers, admins, 1);
      StringBuilder t1 = sections.get(SECTIONS.get(1));
      t1.append(
          "One thread acquires and releases one key, uncontended, "
              + plan.rounds()
              + " interleaved rounds of "
              + plan.segment().toMillis()
              + " ms per contender. Each contender on its own redis-server.\n\n");
      t1.append(
          "| contender | ops/s median (min–max) | ratio to limit (round range) | ratio to best"
              + " Redisson | p50 µs | p99 µs | p999 µs | commands/cycle |\n"
              + "|---|---|---|---|---|---|---|---|\n");
      Result bestRedisson1 = best(s1, redisson);
      for (Locker l : lockers) {
        Result r = s1.get(l);
        t1.append(
            row(
                l.name(),
                r.opsPerSec.spread(),
                r.opsPerSec.ratioTo(s1.get(limit).opsPerSec),
                r.opsPerSec.ratioTo(bestRedisson1.opsPerSec),
                us(r.latency, 50),
                us(r.latency, 99),
                us(r.latency, 99.9),
                r.commandsPerCycle.spread()));
        s1Latency.put("Redis " + l.name(), r.latency);
      }
      double s1Ratio = s1.get(dlock).opsPerSec.median() / s1.get(limit).opsPerSec.median();
      target(
          "Redis S1: ≥ 0.9 of the limit's ops/s",
          Fmt.num(s1.get(dlock).opsPerSec.median())
              + " vs "
              + Fmt.num(s1.get(limit).opsPerSec.median())
              + " ops/s",
          s1Ratio,
          0.9,
          true);

      progress("Redis S2");
      Map<Locker, Result> s2 = scenario(Kind.DISTINCT, lockers, admins, plan.threads());
      Result bestRedisson2 = best(s2, redisson);
      StringBuilder t2 = sections.get(SECTIONS.get(2));
      t2.append(
          plan.threads()
              + " threads (two clients), each on its own key. Commands are counted on the"
              + " contender's own server with `INFO commandstats` after `CONFIG RESETSTAT`"
              + " (commands run inside scripts included); requests are the commands the client"
              + " sent itself (scripts, pub/sub, and the limit's SET); server CPU is"
              + " `used_cpu_sys + used_cpu_user` of `INFO cpu`.\n\n");
      t2.append(
          "| contender | cycles/s median (min–max) | ratio to limit | ratio to best Redisson"
              + " | commands/cycle | requests/cycle | server CPU µs/cycle | p50 µs | p99 µs"
              + " | commands per cycle, by name |\n|---|---|---|---|---|---|---|---|---|---|\n");
      for (Locker l : lockers) {
        Result r = s2.get(l);
        t2.append(
            row(
                l.name(),
                r.opsPerSec.spread(),
                r.opsPerSec.ratioTo(s2.get(limit).opsPerSec),
                r.opsPerSec.ratioTo(bestRedisson2.opsPerSec),
                r.commandsPerCycle.spread(),
                r.requestsPerCycle.spread(),
                r.serverCpuUsPerCycle.spread(),
                us(r.latency, 50),
                us(r.latency, 99),
                r.commandBreakdown));
      }
      Result d2 = s2.get(dlock);
      target(
          "Redis S2: ≥ 0.8 of the limit",
          Fmt.num(d2.opsPerSec.median())
              + " vs "
              + Fmt.num(s2.get(limit).opsPerSec.median())
              + " cycles/s",
          d2.opsPerSec.median() / s2.get(limit).opsPerSec.median(),
          0.8,
          true);
      target(
          "Redis S2: ≥ 3 × Redisson (the faster variant: " + bestRedisson2.name + ")",
          Fmt.num(d2.opsPerSec.median())
              + " vs "
              + Fmt.num(bestRedisson2.opsPerSec.median())
              + " cycles/s",
          d2.opsPerSec.median() / bestRedisson2.opsPerSec.median(),
          3,
          true);
      target(
          "Redis S2: ≤ 7 Redis commands per cycle",
          Fmt.num(d2.commandsPerCycle.median()) + " commands/cycle (" + d2.commandBreakdown + ")",
          d2.commandsPerCycle.median(),
          7,
          false);

      progress("Redis S3");
      List<Locker> waiting = List.of(dlock, redisson.get(0), redisson.get(1));
      Map<Locker, Result> s3 = scenario(Kind.CONTENDED, waiting, admins, plan.threads());
      StringBuilder t3 = sections.get(SECTIONS.get(3));
      t3.append(contendedIntro("redis-server"));
      t3.append(
          "| contender | acquisitions/s | gap p50 µs | gap p99 µs | gap p99 ratio to best"
              + " Redisson | gap p999 µs (all rounds) | barging share | commands/acquisition"
              + " | requests/acquisition |\n|---|---|---|---|---|---|---|---|---|\n");
      Result bestGap = bestBy(s3, redisson, r -> -r.gapP99Us.median());
      for (Locker l : waiting) {
        Result r = s3.get(l);
        t3.append(
            row(
                l.name(),
                r.opsPerSec.spread(),
                r.gapP50Us.spread(),
                r.gapP99Us.spread(),
                r.gapP99Us.ratioTo(bestGap.gapP99Us),
                us(r.gap, 99.9),
                pct(r.bargingShare),
                r.commandsPerCycle.spread(),
                r.requestsPerCycle.spread()));
        s3Gap.put("Redis " + l.name(), r.gap);
      }
      t3.append(
          "\nThe limit is not in this table: a bare SET NX PX has no way to wait but polling.\n");
      Result d3 = s3.get(dlock);
      Result r3 = bestBy(s3, redisson, r -> -r.gapP99Us.median());
      target(
          "Redis S3: hand-off gap p50 ≤ 400 µs",
          Fmt.num(d3.gapP50Us.median()) + " µs",
          d3.gapP50Us.median(),
          400,
          false);
      target(
          "Redis S3: hand-off gap p99 ≤ ½ of Redisson's (" + r3.name + ")",
          Fmt.num(d3.gapP99Us.median()) + " vs " + Fmt.num(r3.gapP99Us.median()) + " µs",
          d3.gapP99Us.median() / r3.gapP99Us.median(),
          0.5,
          false);
    } finally {
      lockers.forEach(Locker::close);
      servers.forEach(RedisAdmin::close);
    }
  }

  private String contendedIntro(String server) {
    return plan.threads()
        + " threads in two clients take turns on one key (no work inside the lock), "
        + plan.rounds()
        + " interleaved rounds of "
        + plan.segment().toMillis()
        + " ms, each contender on its own "
        + server
        + ". The hand-off gap runs from the holder's release call starting to the next holder's"
        + " acquire returning (monotonic clock; never negative). Barging share: acquisitions by"
        + " the thread that released just before.\n\n";
  }

  private Map<Locker, Result> scenario(
      Kind kind, List<Locker> lockers, Map<Locker, RedisAdmin> admins, int threads)
      throws Exception {
    return Scenarios.run(
        kind, lockers, admins, threads, plan.rounds(), plan.segment(), plan.warmup());
  }

  private static Result best(Map<Locker, Result> results, List<Locker> among) {
    return bestBy(results, among, r -> r.opsPerSec.median());
  }

  private static Result bestBy(
      Map<Locker, Result> results,
      List<Locker> among,
      java.util.function.ToDoubleFunction<Result> score) {
    Result best = null;
    for (Locker l : among) {
      Result r = results.get(l);
      if (best == null || score.applyAsDouble(r) > score.applyAsDouble(best)) {
        best = r;
      }
    }
    return best;
  }

  // ------------------------------------------------------------------ S4, S5, S6

  private void heldLocks() throws Exception {
    progress("S4");
    StringBuilder t4 = sections.get(SECTIONS.get(4));
    Duration lease = plan.renewedLease();
    Duration tick = lease.dividedBy(3);
    t4.append(
        "Both clients hold N locks with automatic renewal for "
            + plan.hold().toSeconds()
            + " s, at the same time, each on its own redis-server: dlock with a renewed lease of "
            + lease.toMillis()
            + " ms, Redisson's watchdog with `lockWatchdogTimeout` "
            + lease.toMillis()
            + " ms (both renew every third of it: a tick every "
            + tick.toMillis()
            + " ms). Heap per lock: used heap after full GCs, before and after taking the N"
            + " locks, divided by N (the benchmark keeps each Lease or RLock, as an application"
            + " would).\n\n");
    t4.append(
        "| contender | held locks | commands/s | requests/s | locks renewed per request"
            + " | requests per tick (held locks / locks per request) | bytes/s (in+out)"
            + " | server CPU % | heap bytes per lock | commands per second, by name |\n"
            + "|---|---|---|---|---|---|---|---|---|---|\n");
    List<double[]> dPoints = new ArrayList<>();
    List<double[]> rPoints = new ArrayList<>();
    double worstRequestsPerTick = 0;
    double worstHeap = 0;
    try (RedisAdmin dServer = RedisAdmin.startServer();
        RedisAdmin rServer = RedisAdmin.startServer();
        HeldLocks.DlockHolder dlock = new HeldLocks.DlockHolder(dServer.uri(), lease);
        HeldLocks.RedissonHolder redisson = new HeldLocks.RedissonHolder(rServer.uri(), lease)) {
      for (int n : plan.heldSizes()) {
        double dHeap = HeldLocks.heapPerLock(dlock, "held-" + n + "-", n);
        double rHeap = HeldLocks.heapPerLock(redisson, "held-" + n + "-", n);
        dServer.reset();
        rServer.reset();
        RedisAdmin.Snapshot d0 = dServer.snapshot();
        RedisAdmin.Snapshot r0 = rServer.snapshot();
        Thread.sleep(plan.hold().toMillis());
        RedisAdmin.Snapshot d1 = dServer.snapshot();
        RedisAdmin.Snapshot r1 = rServer.snapshot();
        double[] d = held(t4, "dlock", n, d0, d1, dHeap);
        double[] r = held(t4, "Redisson RLock (watchdog)", n, r0, r1, rHeap);
        dPoints.add(new double[] {n, d[0], d[2]});
        rPoints.add(new double[] {n, r[0], r[2]});
        worstRequestsPerTick = Math.max(worstRequestsPerTick, d[1]);
        worstHeap = Math.max(worstHeap, dHeap);
        dlock.releaseAll();
        redisson.releaseAll();
      }
    }
    s4Series.put("dlock commands/s (incl. inside scripts)", points(dPoints, 1));
    s4Series.put("Redisson watchdog commands/s (incl. inside scripts)", points(rPoints, 1));
    s4Series.put("dlock requests/s", points(dPoints, 2));
    s4Series.put("Redisson watchdog requests/s", points(rPoints, 2));
    target(
        "S4: one request per renewal tick per client, whatever the number of held locks",
        Fmt.num(worstRequestsPerTick)
            + " requests per tick (worst size; held locks / locks renewed per request)",
        worstRequestsPerTick,
        1.05,
        false);
    target(
        "S4: ≤ 300 bytes of heap per held lease",
        Fmt.num(worstHeap) + " bytes (worst size)",
        worstHeap,
        300,
        false);

    progress("S5");
    StringBuilder t5 = sections.get(SECTIONS.get(5));
    t5.append(
        "W asynchronous acquisitions wait on one lock in one client; the holder releases and"
            + " each granted waiter releases at once, for up to "
            + plan.maxHandoffs()
            + " hand-offs (fewer with 10 waiters: W − 1). Counted on a fresh redis-server per"
            + " row, from the first release to the last grant. Commands include those run"
            + " inside scripts; requests are what the client sent itself.\n\n");
    t5.append(
        "| contender | waiters | commands/hand-off | requests/hand-off | commands per hand-off,"
            + " by name |\n|---|---|---|---|---|\n");
    double worstRequests = 0;
    double minRequests = Double.MAX_VALUE;
    double worstCommands = 0;
    for (int w : plan.waiterSizes()) {
      int h = Math.min(w - 1, plan.maxHandoffs());
      HeldLocks.HandoffCounts d = HeldLocks.dlockHandoffs(w, h);
      HeldLocks.HandoffCounts r = HeldLocks.redissonHandoffs(w, h);
      t5.append(
          row(
              "dlock",
              Integer.toString(w),
              Fmt.num(d.commandsPerHandoff()),
              Fmt.num(d.requestsPerHandoff()),
              d.breakdown()));
      t5.append(
          row(
              "Redisson RLock (watchdog)",
              Integer.toString(w),
              Fmt.num(r.commandsPerHandoff()),
              Fmt.num(r.requestsPerHandoff()),
              r.breakdown()));
      worstRequests = Math.max(worstRequests, d.requestsPerHandoff());
      minRequests = Math.min(minRequests, d.requestsPerHandoff());
      worstCommands = Math.max(worstCommands, d.commandsPerHandoff());
    }
    target(
        "S5: ≤ 3 server requests per hand-off, flat from 10 to 1,000 waiters",
        Fmt.num(minRequests) + "–" + Fmt.num(worstRequests) + " requests per hand-off",
        worstRequests,
        3,
        false);
    target(
        "S5: ≤ 3 server commands per hand-off counting commands inside scripts (strict reading)",
        Fmt.num(worstCommands) + " commands per hand-off (worst)",
        worstCommands,
        3,
        false);

    progress("S6");
    StringBuilder t6 = sections.get(SECTIONS.get(6));
    int n = plan.heapLeases();
    t6.append(
        n
            + " leases held at once (renewed, default options), taken asynchronously; used heap"
            + " after full GCs before and after, divided by the number of leases"
            + (n == 100_000 ? "" : ", and scaled to 100,000")
            + ".\n\n");
    t6.append(
        "| contender | leases held | heap bytes per lease | MB for 100,000 leases |\n"
            + "|---|---|---|---|\n");
    double dMb;
    try (RedisAdmin server = RedisAdmin.startServer();
        HeldLocks.DlockHolder dlock =
            new HeldLocks.DlockHolder(server.uri(), Duration.ofSeconds(30))) {
      double per = HeldLocks.heapPerLock(dlock, "s6-", n);
      dMb = per * 100_000 / 1e6;
      t6.append(row("dlock", Fmt.num(n), Fmt.num(per), Fmt.num(dMb)));
      dlock.releaseAll();
    }
    try (RedisAdmin server = RedisAdmin.startServer();
        HeldLocks.RedissonHolder redisson =
            new HeldLocks.RedissonHolder(server.uri(), Duration.ofSeconds(30))) {
      double per = HeldLocks.heapPerLock(redisson, "s6-", n);
      t6.append(
          row("Redisson RLock (watchdog)", Fmt.num(n), Fmt.num(per), Fmt.num(per * 1e5 / 1e6)));
      redisson.releaseAll();
    }
    target("S6: < 30 MB of heap for 100,000 held leases", Fmt.num(dMb) + " MB", dMb, 30, false);
  }

  private static double[][] points(List<double[]> ps, int column) {
    double[][] out = new double[2][ps.size()];
    for (int i = 0; i < ps.size(); i++) {
      out[0][i] = ps.get(i)[0];
      out[1][i] = ps.get(i)[column];
    }
    return out;
  }

  /** One S4 row; returns {commands/s, requests per tick}. */
  private double[] held(
      StringBuilder t,
      String name,
      int n,
      RedisAdmin.Snapshot s0,
      RedisAdmin.Snapshot s1,
      double heap) {
    double seconds = (s1.nanos() - s0.nanos()) / 1e9;
    double commands = (s1.totalCalls() - s0.totalCalls()) / seconds;
    long req = s1.requestsOf(Locker.SCRIPT_AND_PUBSUB::contains);
    req -= s0.requestsOf(Locker.SCRIPT_AND_PUBSUB::contains);
    double requests = req / seconds;
    double bytes = (s1.bytes() - s0.bytes()) / seconds;
    double cpu = (s1.cpuSeconds() - s0.cpuSeconds()) / seconds * 100;
    // Every renewal of a lock extends its key once (PEXPIRE, inside a script for both).
    long extended = s1.calls().getOrDefault("pexpire", 0L) - s0.calls().getOrDefault("pexpire", 0L);
    double perRequest = req == 0 ? Double.NaN : extended / (double) req;
    double perTick = n / perRequest;
    t.append(
        row(
            name,
            Fmt.num(n),
            Fmt.num(commands),
            Fmt.num(requests),
            Fmt.num(perRequest),
            Fmt.num(perTick),
            Fmt.num(bytes),
            Fmt.num(cpu),
            Fmt.num(heap),
            s1.breakdown(seconds)));
    return new double[] {commands, perTick, requests};
  }

  // ------------------------------------------------------------------ ZooKeeper

  private void zookeeper() throws Exception {
    progress("ZooKeeper S1, S2, S3");
    StringBuilder t = sections.get(SECTIONS.get(7));
    versions.put("ZooKeeper", org.apache.zookeeper.Version.getFullVersion());
    try (TestingServer server = new TestingServer(true)) {
      String connect = server.getConnectString();
      List<Locker> lockers = new ArrayList<>();
      try {
        lockers.add(new ZkLockers.Limit(connect));
        lockers.add(new ZkLockers.Dlock(connect, 2));
        lockers.add(new ZkLockers.Curator(connect, 2));
        Locker limit = lockers.get(0);
        Locker dlock = lockers.get(1);
        Locker curator = lockers.get(2);
        Map<Locker, Result> s1 = scenario(Kind.SOLO, lockers, Map.of(), 1);
        Map<Locker, Result> s2 = scenario(Kind.DISTINCT, lockers, Map.of(), plan.threads());
        List<Locker> waiting = List.of(dlock, curator);
        Map<Locker, Result> s3 = scenario(Kind.CONTENDED, waiting, Map.of(), plan.threads());
        t.append(
            "One in-JVM ZooKeeper (curator-test `TestingServer`) for all contenders, in the"
                + " benchmark's JVM. Same scenarios as Redis: S1 one thread one key, S2 "
                + plan.threads()
                + " threads on distinct keys, S3 "
                + plan.threads()
                + " threads in two clients on one key.\n\n");
        t.append(
            "| contender | S1 ops/s | S1 ratio to limit | S1 p50 µs | S1 p99 µs | S2 cycles/s"
                + " | S2 ratio to Curator | S2 ratio to limit |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        for (Locker l : lockers) {
          t.append(
              row(
                  l.name(),
                  s1.get(l).opsPerSec.spread(),
                  s1.get(l).opsPerSec.ratioTo(s1.get(limit).opsPerSec),
                  us(s1.get(l).latency, 50),
                  us(s1.get(l).latency, 99),
                  s2.get(l).opsPerSec.spread(),
                  s2.get(l).opsPerSec.ratioTo(s2.get(curator).opsPerSec),
                  s2.get(l).opsPerSec.ratioTo(s2.get(limit).opsPerSec)));
          s1Latency.put("ZooKeeper " + l.name(), s1.get(l).latency);
        }
        t.append("\n### ZooKeeper S3: 16 threads, one key\n\n");
        t.append(contendedIntro("ZooKeeper (the same one)"));
        t.append(
            "| contender | acquisitions/s | gap p50 µs | gap p99 µs | gap p999 µs (all rounds)"
                + " | barging share |\n|---|---|---|---|---|---|\n");
        for (Locker l : waiting) {
          Result r = s3.get(l);
          t.append(
              row(
                  l.name(),
                  r.opsPerSec.spread(),
                  r.gapP50Us.spread(),
                  r.gapP99Us.spread(),
                  us(r.gap, 99.9),
                  pct(r.bargingShare)));
          s3Gap.put("ZooKeeper " + l.name(), r.gap);
        }
        target(
            "ZooKeeper: throughput ≥ Curator's (S2, 16 threads)",
            Fmt.num(s2.get(dlock).opsPerSec.median())
                + " vs "
                + Fmt.num(s2.get(curator).opsPerSec.median())
                + " cycles/s",
            s2.get(dlock).opsPerSec.median() / s2.get(curator).opsPerSec.median(),
            1,
            true);
        target(
            "ZooKeeper: throughput ≥ Curator's (S1, one thread)",
            Fmt.num(s1.get(dlock).opsPerSec.median())
                + " vs "
                + Fmt.num(s1.get(curator).opsPerSec.median())
                + " ops/s",
            s1.get(dlock).opsPerSec.median() / s1.get(curator).opsPerSec.median(),
            1,
            true);
        target(
            "ZooKeeper: hand-off gap p99 ≤ Curator's (S3)",
            Fmt.num(s3.get(dlock).gapP99Us.median())
                + " vs "
                + Fmt.num(s3.get(curator).gapP99Us.median())
                + " µs",
            s3.get(dlock).gapP99Us.median() / s3.get(curator).gapP99Us.median(),
            1,
            false);
      } finally {
        lockers.forEach(Locker::close);
      }
    }
  }

  // ------------------------------------------------------------------ JDBC

  private void jdbc() throws Exception {
    StringBuilder t = sections.get(SECTIONS.get(8));
    String url = System.getenv("DLOCK_TEST_POSTGRES_URL");
    if (url == null || url.isBlank()) {
      t.append(
          "Skipped: `DLOCK_TEST_POSTGRES_URL` is not set (for example"
              + " `jdbc:postgresql://127.0.0.1:5432/test?user=postgres`).\n");
      target(
          "JDBC lease row on PostgreSQL: ≥ 1.2 × the JDBC peer",
          "skipped (no PostgreSQL)",
          0,
          0,
          true);
      return;
    }
    progress("JDBC S1, S2");
    List<Locker> lockers = new ArrayList<>();
    try {
      lockers.add(new JdbcLockers.Dlock(url));
      lockers.add(new JdbcLockers.ShedLock(url));
      try (var c = java.sql.DriverManager.getConnection(url);
          var st = c.createStatement();
          var rs = st.executeQuery("SHOW server_version")) {
        rs.next();
        versions.put("PostgreSQL", rs.getString(1));
      }
      Locker dlock = lockers.get(0);
      Locker shed = lockers.get(1);
      Map<Locker, Result> s1 = scenario(Kind.SOLO, lockers, Map.of(), 1);
      Map<Locker, Result> s2 = scenario(Kind.DISTINCT, lockers, Map.of(), plan.threads());
      t.append(
          "PostgreSQL from `DLOCK_TEST_POSTGRES_URL`, both with 4 connections (dlock's"
              + " `maxConcurrentCalls`, ShedLock's Hikari pool). Both rotate each thread over 16"
              + " names: ShedLock cannot take a name again within the millisecond it released it."
              + " ShedLock has no waiting, so there is no S3 here. Spring Integration's"
              + " `JdbcLockRegistry` is not measured (see the notes).\n\n");
      t.append(
          "| contender | S1 ops/s | S1 ratio to ShedLock | S1 p50 µs | S1 p99 µs | S2 cycles/s (16"
              + " threads) | S2 ratio to ShedLock |\n|---|---|---|---|---|---|---|\n");
      for (Locker l : lockers) {
        t.append(
            row(
                l.name(),
                s1.get(l).opsPerSec.spread(),
                s1.get(l).opsPerSec.ratioTo(s1.get(shed).opsPerSec),
                us(s1.get(l).latency, 50),
                us(s1.get(l).latency, 99),
                s2.get(l).opsPerSec.spread(),
                s2.get(l).opsPerSec.ratioTo(s2.get(shed).opsPerSec)));
      }
      target(
          "JDBC lease row on PostgreSQL: ≥ 1.2 × ShedLock (S1, one thread)",
          Fmt.num(s1.get(dlock).opsPerSec.median())
              + " vs "
              + Fmt.num(s1.get(shed).opsPerSec.median())
              + " ops/s",
          s1.get(dlock).opsPerSec.median() / s1.get(shed).opsPerSec.median(),
          1.2,
          true);
      target(
          "JDBC lease row on PostgreSQL: ≥ 1.2 × ShedLock (S2, 16 threads)",
          Fmt.num(s2.get(dlock).opsPerSec.median())
              + " vs "
              + Fmt.num(s2.get(shed).opsPerSec.median())
              + " cycles/s",
          s2.get(dlock).opsPerSec.median() / s2.get(shed).opsPerSec.median(),
          1.2,
          true);
    } finally {
      lockers.forEach(Locker::close);
    }
  }

  // ------------------------------------------------------------------ report

  /**
   * Records a target: met when {@code measured >= goal} (higher is better) or {@code measured <=
   * goal} (lower is better); the ratio printed is measured / goal.
   */
  private void target(
      String name, String measured, double value, double goal, boolean higherIsBetter) {
    if (goal == 0) {
      targets.add(new String[] {name, measured, "n/a", "n/a", "n/a", "not measured"});
      return;
    }
    boolean met = higherIsBetter ? value >= goal : value <= goal;
    targets.add(
        new String[] {
          name,
          measured,
          Fmt.num(value),
          (higherIsBetter ? "≥ " : "≤ ") + Fmt.num(goal),
          Fmt.ratio(value / goal),
          met ? "**met**" : "**missed**"
        });
  }

  private void charts(Path dir) throws IOException {
    Charts.percentiles(
        dir.resolve("s1-latency.png"),
        "S1: acquire + release latency, one thread, uncontended",
        "latency (µs, log)",
        s1Latency);
    Charts.percentiles(
        dir.resolve("s3-handoff-gap.png"),
        "S3: hand-off gap, 16 threads on one key",
        "release start to next acquire return (µs, log)",
        s3Gap);
    Charts.lines(
        dir.resolve("s4-commands.png"),
        "S4: Redis commands and requests per second while holding N locks with renewal",
        "held locks (log)",
        "per second (log)",
        s4Series);
  }

  private String assemble(
      String[] args, Instant started, Duration took, String load, boolean charts, String notes) {
    StringBuilder md = new StringBuilder();
    md.append("# dlock benchmarks\n\n");
    md.append(
        "dlock next to the physical limit and to its peers, measured in one run on one machine"
            + " on servers the benchmark starts itself. Generated by `dlock-bench`"
            + " (`io.dlock.bench.BenchmarkMain`); every number below comes from the run described"
            + " here. Rerun it, do not edit the tables by hand (the notes at the end are kept"
            + " across runs).\n\n");
    md.append("## How to run\n\n```sh\n").append(COMMAND).append("\n```\n\n");
    md.append(
        "`--quick` shortens every duration and count (under 2 minutes; CI runs it as a smoke"
            + " test, `QuickModeIT`); without `--out` the report is only printed. Set"
            + " `DLOCK_TEST_POSTGRES_URL` (e.g. `jdbc:postgresql://127.0.0.1:5432/test?user=postgres`)"
            + " for the JDBC rows.\n\n");
    md.append("## This run\n\n");
    md.append("- mode: ")
        .append(plan.quick() ? "**quick** (a smoke run: figures are rough)" : "full")
        .append(", arguments `")
        .append(String.join(" ", args))
        .append("`\n");
    md.append("- started ")
        .append(started.truncatedTo(ChronoUnit.SECONDS))
        .append(", took ")
        .append(took.toMinutesPart())
        .append(" min ")
        .append(took.toSecondsPart())
        .append(" s\n");
    md.append("- machine: ").append(machine()).append('\n');
    md.append("- machine load during the run: ").append(load).append('\n');
    md.append("- versions: ").append(versionLine()).append("\n\n");
    md.append(
        "Ratios are of medians over the rounds; the range in parentheses is the lowest and highest"
            + " round-by-round ratio (rounds are interleaved: every contender runs once per round,"
            + " the order flipping each round), or the lowest and highest round value.\n\n");
    StringBuilder tt = sections.get(SECTIONS.get(0));
    tt.append(
        "The figure is the ratio (or count) the target is stated in; figure/goal says by how"
            + " much it is met or missed (≥ 1 meets a \"≥\" goal, ≤ 1 meets a \"≤\" goal).\n\n"
            + "| target | measured | figure | goal | figure/goal | verdict |\n"
            + "|---|---|---|---|---|---|\n");
    for (String[] t : targets) {
      tt.append(row(t));
    }
    for (Map.Entry<String, StringBuilder> e : sections.entrySet()) {
      md.append(e.getKey()).append("\n\n").append(e.getValue()).append('\n');
    }
    if (charts) {
      md.append("## Charts\n\n");
      md.append("![S1 latency](benchmarks/s1-latency.png)\n\n");
      md.append("![S3 hand-off gap](benchmarks/s3-handoff-gap.png)\n\n");
      md.append("![S4 commands per second](benchmarks/s4-commands.png)\n\n");
    }
    md.append("## Notes\n\n").append(NOTES_BEGIN).append('\n').append(notes).append(NOTES_END);
    md.append('\n');
    return md.toString();
  }

  private static String existingNotes(Path out) throws IOException {
    if (out != null && Files.exists(out)) {
      String text = Files.readString(out);
      int b = text.indexOf(NOTES_BEGIN);
      int e = text.indexOf(NOTES_END);
      if (b >= 0 && e > b) {
        return text.substring(b + NOTES_BEGIN.length() + 1, e);
      }
    }
    return "(none yet)\n";
  }

  private String versionLine() {
    Map<String, String> v = new LinkedHashMap<>();
    v.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    v.put("dlock", mavenVersion("io.dlock", "dlock-redis"));
    v.put("Lettuce", mavenVersion("io.lettuce", "lettuce-core"));
    v.put("Redisson", mavenVersion("org.redisson", "redisson"));
    v.put("Curator", mavenVersion("org.apache.curator", "curator-recipes"));
    v.put("ShedLock", mavenVersion("net.javacrumbs.shedlock", "shedlock-provider-jdbc"));
    v.put("PostgreSQL JDBC", org.postgresql.util.DriverInfo.DRIVER_VERSION);
    v.putAll(versions);
    StringBuilder s = new StringBuilder();
    v.forEach((k, val) -> s.append(s.length() == 0 ? "" : ", ").append(k).append(' ').append(val));
    return s.toString();
  }

  private static String mavenVersion(String group, String artifact) {
    String path = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = BenchmarkMain.class.getResourceAsStream(path)) {
      if (in == null) {
        return "?";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "?");
    } catch (IOException e) {
      return "?";
    }
  }

  private static String machine() {
    String cpu = "?";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: leave it unknown
    }
    long memGb =
        ((com.sun.management.OperatingSystemMXBean)
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize()
            >> 30;
    return String.format(
        Locale.ROOT,
        "%d cores (%s), %d GiB, %s %s; client and servers on the same machine, loopback only",
        Runtime.getRuntime().availableProcessors(),
        cpu,
        memGb,
        System.getProperty("os.name"),
        System.getProperty("os.version"));
  }

  private static String row(String... cells) {
    return "| " + String.join(" | ", cells) + " |\n";
  }

  private static String us(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? "n/a" : Fmt.num(h.getValueAtPercentile(percentile) / 1e3);
  }

  private static String pct(Fmt.Series s) {
    if (s.isEmpty()) {
      return "n/a";
    }
    return String.format(
        Locale.ROOT, "%.0f%% (%.0f–%.0f%%)", s.median() * 100, s.min() * 100, s.max() * 100);
  }
}
