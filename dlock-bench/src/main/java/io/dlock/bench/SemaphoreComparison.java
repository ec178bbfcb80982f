package io.dlock.bench;

import static io.dlock.bench.ElectionComparison.percentile;
import static io.dlock.bench.ElectionComparison.time;
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
import org.apache.curator.test.TestingServer;

/**
 * Leased semaphores: the throughput of permits shared by 16 threads, and the time until a killed
 * holder's permit comes back to a waiter, for dlock on Redis, ZooKeeper and PostgreSQL (lease row)
 * next to Redisson's {@code RSemaphore} and {@code RPermitExpirableSemaphore} on the same Redis and
 * Curator's {@code InterProcessSemaphoreV2} on the same ZooKeeper; writes the semaphore section and
 * its targets.
 *
 * <p>Runs alone with {@code java -cp dlock-bench.jar io.dlock.bench.SemaphoreComparison [--quick]},
 * printing that section, the targets and the machine's load.
 */
final class SemaphoreComparison {
  private SemaphoreComparison() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("zookeeper.admin.enableServer", "false");
    boolean quick = Arrays.asList(args).contains("--quick");
    RunPlan plan = quick ? RunPlan.quickPlan() : RunPlan.fullPlan();
    MarkdownReport report = new MarkdownReport(plan);
    try (MachineLoad load = new MachineLoad()) {
      run(plan, report);
      System.out.println(
          MarkdownReport.SEMAPHORES + "\n\n" + report.section(MarkdownReport.SEMAPHORES));
      System.out.println(report.targets().table());
      System.out.println("- machine load during the run: " + load.summary());
      System.out.println("- versions: " + report.versions().line());
    }
  }

  /**
   * The servers the contenders share: one redis-server, one in-JVM ZooKeeper, and PostgreSQL's URL
   * and its parts ({@link ElectionComparison#POSTGRES_URL}), both null if it is not measured.
   */
  record Servers(RedisAdmin redis, TestingServer zk, String postgres, Matcher pg) {
    InetSocketAddress redisAddress() {
      return new InetSocketAddress("127.0.0.1", redis.port());
    }

    InetSocketAddress zkAddress() {
      return new InetSocketAddress("127.0.0.1", zk.getPort());
    }
  }

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    String postgres = System.getenv("DLOCK_TEST_POSTGRES_URL");
    Matcher pg = ElectionComparison.POSTGRES_URL.matcher(postgres == null ? "" : postgres);
    String pgSkipped = null; // why dlock on PostgreSQL is not measured, if it is not
    if (postgres == null || postgres.isBlank()) {
      pgSkipped = "skipped: `DLOCK_TEST_POSTGRES_URL` is not set";
    } else if (!pg.matches()) {
      pgSkipped = "skipped: `DLOCK_TEST_POSTGRES_URL` names no single host to put a proxy before";
    } else {
      report.versions().addServer("PostgreSQL", JdbcComparison.serverVersion(postgres));
    }
    RedisAdmin redis = RedisAdmin.startServer();
    try (TestingServer zk = ElectionComparison.zooKeeper()) {
      report.versions().addServer("Redis server", redis.version());
      report.versions().addServer("ZooKeeper", org.apache.zookeeper.Version.getFullVersion());
      Servers servers =
          pgSkipped == null
              ? new Servers(redis, zk, postgres, pg)
              : new Servers(redis, zk, null, null);
      SemaphoreThroughput throughput = SemaphoreThroughput.run(plan, servers);
      Contenders contenders = contenders(plan.semaphores(), servers);
      Map<SemaphoreContender, List<Double>> killed = killRounds(plan, contenders.all());
      write(report, plan, throughput, killed, contenders.dlockBeside(), pgSkipped);
      BenchmarkMain.progress("Leased semaphores: done");
    } finally {
      redis.close();
    }
  }

  /**
   * The kill rounds' contenders in report order, and for each peer the dlock contender on its
   * server (the ratio's numerator).
   */
  private record Contenders(
      List<SemaphoreContender> all, Map<SemaphoreContender, SemaphoreContender> dlockBeside) {}

  /**
   * dlock on Redis and the peer there, dlock on ZooKeeper and the peer there, and dlock on
   * PostgreSQL if measured, with the bounds of the kill rounds.
   */
  private static Contenders contenders(RunPlan.Semaphores s, Servers servers) {
    Duration bound = s.bound();
    Duration connection = s.connectionTimeout();
    String lease =
        "renewed lease " + time(bound) + " (renewed every " + time(bound.dividedBy(3)) + ")";
    String session = "session timeout " + time(bound) + ", connection timeout " + time(connection);
    List<SemaphoreContender> contenders = new ArrayList<>();
    Map<SemaphoreContender, SemaphoreContender> dlockBeside = new LinkedHashMap<>();
    SemaphoreContender dlockRedis =
        new SemaphoreContenders.Dlock(
            "dlock on Redis",
            lease,
            servers.redisAddress(),
            address -> RedisLocks.newClient("redis://" + address),
            bound);
    SemaphoreContender redisson =
        new SemaphoreContenders.RedissonExpirable(
            "lease " + time(bound) + " (not renewed)", servers.redisAddress(), bound);
    dlockBeside.put(redisson, dlockRedis);
    SemaphoreContender dlockZk =
        new SemaphoreContenders.Dlock(
            "dlock on ZooKeeper",
            session + " (lease " + time(bound) + ")",
            servers.zkAddress(),
            address ->
                ZooKeeperLocks.newClient(
                    ZooKeeperLockSettings.of(address)
                        .withRootPath("/bench-semaphore-dlock")
                        .withSessionTimeout(bound)
                        .withConnectionTimeout(connection),
                    LockClientOptions.defaults()),
            bound);
    SemaphoreContender curator =
        new SemaphoreContenders.Curator(session, servers.zkAddress(), bound, connection);
    dlockBeside.put(curator, dlockZk);
    contenders.addAll(List.of(dlockRedis, redisson, dlockZk, curator));
    Matcher pg = servers.pg;
    if (pg != null) {
      String before = pg.group(1);
      String after = pg.group(4);
      int port = pg.group(3) == null ? 5432 : Integer.parseInt(pg.group(3));
      contenders.add(
          new SemaphoreContenders.Dlock(
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
    return new Contenders(contenders, dlockBeside);
  }

  /**
   * Every contender's kill rounds on a thread of its own, all at once: a round is mostly waiting
   * for a lease or session to run out (seconds of timers; the systems share the CPU only for the
   * milliseconds of their own calls).
   */
  private static Map<SemaphoreContender, List<Double>> killRounds(
      RunPlan plan, List<SemaphoreContender> contenders) throws Exception {
    RunPlan.Semaphores s = plan.semaphores();
    BenchmarkMain.progress(
        "Leased semaphores: "
            + s.killRounds()
            + " killed-holder round(s) of each system, at the same time");
    String prefix = "bench-semaphore-kill-" + Long.toHexString(System.currentTimeMillis());
    ExecutorService threads = Executors.newFixedThreadPool(contenders.size());
    try {
      Map<SemaphoreContender, Future<List<Double>>> running = new LinkedHashMap<>();
      for (int i = 0; i < contenders.size(); i++) {
        SemaphoreContender c = contenders.get(i);
        String names = prefix + "-" + i;
        running.put(c, threads.submit(() -> new SemaphoreKillRounds(c, s).run(names)));
      }
      Map<SemaphoreContender, List<Double>> results = new LinkedHashMap<>();
      for (Map.Entry<SemaphoreContender, Future<List<Double>>> e : running.entrySet()) {
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
      SemaphoreThroughput throughput,
      Map<SemaphoreContender, List<Double>> killed,
      Map<SemaphoreContender, SemaphoreContender> dlockBeside,
      String pgSkipped) {
    StringBuilder t = report.section(MarkdownReport.SEMAPHORES);
    throughput.write(t, report.targets());
    if (pgSkipped != null) {
      t.append("\ndlock lease row on PostgreSQL: ").append(pgSkipped).append(".\n");
    }
    writeKilled(t, report.targets(), plan.semaphores(), killed, dlockBeside, pgSkipped);
  }

  private static void writeKilled(
      StringBuilder t,
      Targets targets,
      RunPlan.Semaphores s,
      Map<SemaphoreContender, List<Double>> killed,
      Map<SemaphoreContender, SemaphoreContender> dlockBeside,
      String pgSkipped) {
    Duration bound = s.bound();
    t.append("\n### A killed holder's permit back to a waiter\n\n");
    t.append(
        s.killRounds()
            + (s.killRounds() == 1 ? " round" : " rounds")
            + " per system, on a semaphore of one permit: a holder and a waiter, each in a client"
            + " of its own (as separate processes are) that reaches the server through a TCP"
            + " proxy of its own (dlock-testkit `TcpProxy`). The holder takes the permit and the"
            + " waiter starts waiting for it; at a random time within the first third of the"
            + " bound after the grant, the holder's proxy closes its connections and refuses new"
            + " ones, as a crashed process's sockets look to the server (no release, no session"
            + " close, no more renewals or pings); timed from then until the waiter's acquisition"
            + " returns with the permit. The systems run at the same time, each on a thread of its"
            + " own. Bounds set alike: dlock's renewed lease "
            + time(bound)
            + ", Redisson's permit lease "
            + time(bound)
            + " (`tryAcquire(wait, lease, unit)`; Redisson does not renew it), the ZooKeeper"
            + " session timeout "
            + time(bound)
            + " for dlock's and Curator's clients alike (tickTime "
            + ElectionComparison.ZOOKEEPER_TICK_MS
            + " ms). The permit comes free between ⅔ of the bound and the whole bound after the"
            + " kill (plus up to a tick on ZooKeeper). Redisson's `RSemaphore` is not in this"
            + " table: it has no lease, a dead holder's permits never come back by themselves.\n\n");
    t.append(
        "| system | bound | back median ms | back p90 ms | back max ms | dlock on this server,"
            + " ratio to it |\n|---|---|---|---|---|---|\n");
    for (Map.Entry<SemaphoreContender, List<Double>> e : killed.entrySet()) {
      SemaphoreContender c = e.getKey();
      List<Double> ms = e.getValue();
      SemaphoreContender dlock = dlockBeside.get(c);
      String ratio =
          dlock == null ? "—" : Fmt.ratio(percentile(killed.get(dlock), 50) / percentile(ms, 50));
      t.append(
          row(
              c.name(),
              c.bound(),
              Fmt.num(percentile(ms, 50)),
              Fmt.num(percentile(ms, 90)),
              Fmt.num(percentile(ms, 100)),
              ratio));
      if (c instanceof SemaphoreContenders.Dlock) {
        double worst = percentile(ms, 100);
        targets.atMost(
            "Semaphores, "
                + c.name()
                + ": a killed holder's permit back to a waiter within the bound + 1 s, every"
                + " round",
            Fmt.num(worst) + " ms at worst, bound " + time(bound),
            worst / 1000,
            bound.toMillis() / 1000.0 + 1);
      }
    }
    t.append(
        "\nPercentiles are of the rounds (nearest rank: with few rounds, p90 is the worst); the"
            + " ratio is of medians, dlock's over the peer's on the same server (below 1: dlock's"
            + " permit came back sooner).\n");
    if (pgSkipped != null) {
      targets.notMeasured(
          "Semaphores, dlock lease row on PostgreSQL: a killed holder's permit back within the"
              + " bound + 1 s",
          pgSkipped);
    }
  }
}
