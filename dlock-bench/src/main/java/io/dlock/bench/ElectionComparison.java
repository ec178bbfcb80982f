package io.dlock.bench;

import static io.dlock.bench.Fmt.row;

import io.dlock.LockClientOptions;
import io.dlock.jdbc.JdbcLockSettings;
import io.dlock.jdbc.JdbcLocks;
import io.dlock.redis.RedisLocks;
import io.dlock.zookeeper.ZooKeeperLockSettings;
import io.dlock.zookeeper.ZooKeeperLocks;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * Leader election: the time to a new leader after the leader is killed, and after it steps down,
 * for dlock on Redis, ZooKeeper and PostgreSQL (lease row) and Curator's LeaderLatch and
 * LeaderSelector on the same ZooKeeper, each bounded by settings of the same length (see {@link
 * ElectionRounds}); writes the election section and its targets.
 *
 * <p>Runs alone with {@code java -cp dlock-bench.jar io.dlock.bench.ElectionComparison [--quick]},
 * printing that section, the targets and the machine's load.
 */
final class ElectionComparison {
  /**
   * The in-JVM ZooKeeper's tick: the server expires sessions on tick boundaries, and allows session
   * timeouts from 2 ticks, so the quick smoke run's 1 s bound is allowed.
   */
  static final int ZOOKEEPER_TICK_MS = 500;

  static final Pattern POSTGRES_URL =
      Pattern.compile("(jdbc:postgresql://)([^/:?,]+)(?::(\\d+))?(/.*)");

  private ElectionComparison() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("zookeeper.admin.enableServer", "false");
    boolean quick = Arrays.asList(args).contains("--quick");
    RunPlan plan = quick ? RunPlan.quickPlan() : RunPlan.fullPlan();
    MarkdownReport report = new MarkdownReport(plan);
    try (MachineLoad load = new MachineLoad()) {
      run(plan, report);
      System.out.println(
          MarkdownReport.ELECTION + "\n\n" + report.section(MarkdownReport.ELECTION));
      System.out.println(report.targets().table());
      System.out.println("- machine load during the run: " + load.summary());
      System.out.println("- versions: " + report.versions().line());
    }
  }

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    RunPlan.Election election = plan.election();
    BenchmarkMain.progress(
        "Leader election: " + rounds(election) + " of each system, at the same time");
    String postgres = System.getenv("DLOCK_TEST_POSTGRES_URL");
    Matcher pg = POSTGRES_URL.matcher(postgres == null ? "" : postgres);
    String pgSkipped = null; // why dlock on PostgreSQL is not measured, if it is not
    if (postgres == null || postgres.isBlank()) {
      pgSkipped = "skipped: `DLOCK_TEST_POSTGRES_URL` is not set";
    } else if (!pg.matches()) {
      pgSkipped = "skipped: `DLOCK_TEST_POSTGRES_URL` names no single host to put a proxy before";
    } else {
      report.versions().addServer("PostgreSQL", JdbcComparison.serverVersion(postgres));
    }
    RedisAdmin redis = RedisAdmin.startServer();
    try (TestingServer zk = zooKeeper()) {
      report.versions().addServer("Redis server", redis.version());
      report.versions().addServer("ZooKeeper", org.apache.zookeeper.Version.getFullVersion());
      List<ElectionContender> contenders =
          contenders(
              election,
              new InetSocketAddress("127.0.0.1", redis.port()),
              new InetSocketAddress("127.0.0.1", zk.getPort()),
              pgSkipped == null ? pg : null);
      String prefix = "bench-election-" + Long.toHexString(System.currentTimeMillis());
      Map<ElectionContender, ElectionRounds.Samples> results = runAtOnce(contenders, plan, prefix);
      write(report, plan, contenders, results, pgSkipped);
    } finally {
      redis.close();
    }
  }

  /**
   * dlock on each backend, then Curator's two recipes; dlock on PostgreSQL only if {@code pg} is
   * not null (the URL of {@code DLOCK_TEST_POSTGRES_URL}, matched by {@link #POSTGRES_URL}).
   */
  private static List<ElectionContender> contenders(
      RunPlan.Election election, InetSocketAddress redis, InetSocketAddress zk, Matcher pg) {
    Duration bound = election.bound();
    Duration connection = election.connectionTimeout();
    String lease =
        "renewed lease " + time(bound) + " (renewed every " + time(bound.dividedBy(3)) + ")";
    String session = "session timeout " + time(bound) + ", connection timeout " + time(connection);
    List<ElectionContender> contenders = new ArrayList<>();
    contenders.add(
        new ElectionContenders.Dlock(
            "dlock on Redis",
            lease,
            redis,
            address -> RedisLocks.newClient("redis://" + address),
            bound));
    contenders.add(
        new ElectionContenders.Dlock(
            "dlock on ZooKeeper",
            session + " (lease " + time(bound) + ")",
            zk,
            address ->
                ZooKeeperLocks.newClient(
                    ZooKeeperLockSettings.of(address)
                        .withRootPath("/bench-election-dlock")
                        .withSessionTimeout(bound)
                        .withConnectionTimeout(connection),
                    LockClientOptions.defaults()),
            bound));
    if (pg != null) {
      String before = pg.group(1);
      String after = pg.group(4);
      int port = pg.group(3) == null ? 5432 : Integer.parseInt(pg.group(3));
      contenders.add(
          new ElectionContenders.Dlock(
              "dlock lease row on PostgreSQL",
              lease,
              new InetSocketAddress(pg.group(2), port),
              address ->
                  JdbcLocks.newClient(
                      JdbcLockSettings.of(before + address + after)
                          .withTable("dlock_bench_locks")
                          .withCreateSchema(true),
                      LockClientOptions.defaults()),
              bound));
    }
    contenders.add(new ElectionContenders.Curator(false, session, zk, bound, connection));
    contenders.add(new ElectionContenders.Curator(true, session, zk, bound, connection));
    return contenders;
  }

  static TestingServer zooKeeper() throws Exception {
    InstanceSpec spec =
        new InstanceSpec(
            null,
            -1,
            -1,
            -1,
            true,
            -1,
            ZOOKEEPER_TICK_MS,
            -1,
            Map.of("admin.enableServer", "false"),
            "127.0.0.1");
    return new TestingServer(spec, true);
  }

  /**
   * Every contender's rounds on a thread of its own, all at once: a round is mostly waiting for a
   * lease or session to run out, so running them one after the other would multiply the time
   * without changing what is measured (seconds of timers; the systems share the CPU only for the
   * milliseconds of their own calls).
   */
  private static Map<ElectionContender, ElectionRounds.Samples> runAtOnce(
      List<ElectionContender> contenders, RunPlan plan, String prefix) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(contenders.size());
    try {
      Map<ElectionContender, Future<ElectionRounds.Samples>> running = new LinkedHashMap<>();
      for (int i = 0; i < contenders.size(); i++) {
        ElectionContender c = contenders.get(i);
        String names = prefix + "-" + i;
        running.put(c, threads.submit(() -> new ElectionRounds(c, plan.election()).run(names)));
      }
      Map<ElectionContender, ElectionRounds.Samples> results = new LinkedHashMap<>();
      for (Map.Entry<ElectionContender, Future<ElectionRounds.Samples>> e : running.entrySet()) {
        results.put(e.getKey(), e.getValue().get());
      }
      return results;
    } finally {
      threads.shutdownNow();
    }
  }

  private static void write(
      MarkdownReport report,
      RunPlan plan,
      List<ElectionContender> contenders,
      Map<ElectionContender, ElectionRounds.Samples> results,
      String pgSkipped) {
    RunPlan.Election election = plan.election();
    Duration bound = election.bound();
    StringBuilder t = report.section(MarkdownReport.ELECTION);
    t.append(
        rounds(election)
            + " per system, each with "
            + ElectionRounds.CANDIDATES
            + " candidates, every candidate in a client of its own (as separate processes are)"
            + " that reaches the server through a TCP proxy of its own (dlock-testkit `TcpProxy`)."
            + " **Handover**: the leader steps down the normal way (dlock `LeaderElection.close()`,"
            + " `LeaderLatch.close()`, a LeaderSelector returning from `takeLeadership`), timed"
            + " from that call until another candidate is told it leads (dlock `elected`,"
            + " `LeaderLatchListener.isLeader`, `takeLeadership` called). **Failover**: at a"
            + " random time within the first third of the bound after that new leader was told,"
            + " its proxy closes its connections and refuses new ones, as a crashed process's"
            + " sockets look to the server (no release, no session close, no more renewals or"
            + " pings); timed from then until the last candidate is told it leads. The systems"
            + " run at the same time, each on a thread of its own. This part alone: `java -cp"
            + " dlock-bench/target/dlock-bench.jar io.dlock.bench.ElectionComparison"
            + " [--quick]`.\n\n");
    t.append(
        "Bounds, set alike: dlock's renewed lease "
            + time(bound)
            + " on Redis and PostgreSQL; the ZooKeeper session timeout "
            + time(bound)
            + " and connection timeout "
            + time(election.connectionTimeout())
            + " for dlock's and Curator's clients alike (with the same retry policy; dlock's lease"
            + " there is "
            + time(bound)
            + " too). One in-JVM ZooKeeper (curator-test `TestingServer`, tickTime "
            + ZOOKEEPER_TICK_MS
            + " ms: it expires sessions on tick boundaries) for dlock and both Curator recipes, a"
            + " redis-server of its own, PostgreSQL from `DLOCK_TEST_POSTGRES_URL`. After a kill"
            + " the server frees the leader's lock between ⅔ of the bound and the whole bound"
            + " later (the last renewal or ping was at most a third of it before), plus up to a"
            + " tick on ZooKeeper; then a candidate must hear of it and take it.\n\n");
    t.append(
        "| system | bound | failover median ms | failover p90 ms | failover max ms | failover"
            + " ratio to LeaderLatch | handover median ms | handover p90 ms | handover max ms |"
            + " handover ratio to LeaderLatch |\n|---|---|---|---|---|---|---|---|---|---|\n");
    ElectionRounds.Samples base =
        results.get(
            contenders.stream()
                .filter(c -> c.name().equals(ElectionContenders.Curator.LATCH))
                .findFirst()
                .orElseThrow());
    for (ElectionContender c : contenders) {
      ElectionRounds.Samples s = results.get(c);
      t.append(
          row(
              c.name(),
              c.bound(),
              Fmt.num(percentile(s.failoverMs(), 50)),
              Fmt.num(percentile(s.failoverMs(), 90)),
              Fmt.num(percentile(s.failoverMs(), 100)),
              Fmt.ratio(percentile(s.failoverMs(), 50) / percentile(base.failoverMs(), 50)),
              Fmt.num(percentile(s.handoverMs(), 50)),
              Fmt.num(percentile(s.handoverMs(), 90)),
              Fmt.num(percentile(s.handoverMs(), 100)),
              Fmt.ratio(percentile(s.handoverMs(), 50) / percentile(base.handoverMs(), 50))));
    }
    if (pgSkipped != null) {
      t.append("\ndlock lease row on PostgreSQL: ").append(pgSkipped).append(".\n");
    }
    t.append(
        "\nPercentiles are of the rounds (nearest rank: with few rounds, p90 is the worst)."
            + " Ratios are of medians, dlock's over Curator LeaderLatch's.\n");

    Targets targets = report.targets();
    for (ElectionContender c : contenders) {
      if (c instanceof ElectionContenders.Dlock) {
        double worst = percentile(results.get(c).failoverMs(), 100);
        targets.atMost(
            "Election, "
                + c.name()
                + ": a killed leader replaced within the bound + 1 s (docs/election.md), every"
                + " round",
            Fmt.num(worst) + " ms at worst, bound " + time(bound),
            worst / 1000,
            bound.toMillis() / 1000.0 + 1);
      }
    }
    if (pgSkipped != null) {
      targets.notMeasured(
          "Election, dlock lease row on PostgreSQL: a killed leader replaced within the bound + 1"
              + " s",
          pgSkipped);
    }
  }

  private static String rounds(RunPlan.Election election) {
    return election.rounds() + (election.rounds() == 1 ? " round" : " rounds");
  }

  /** Nearest-rank percentile; 100 is the largest. */
  static double percentile(List<Double> values, double p) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int rank = (int) Math.ceil(p / 100 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }

  /** {@code 3 s}, {@code 1.5 s}, {@code 500 ms}. */
  static String time(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + " ms";
    }
    return (ms % 1000 == 0 ? String.valueOf(ms / 1000) : String.valueOf(ms / 1000.0)) + " s";
  }
}
