package io.dlock.bench;

import static io.dlock.bench.Fmt.row;

import io.dlock.bench.Scenarios.Kind;
import io.dlock.bench.Scenarios.Result;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.TestingServer;

/**
 * S2 and S3 in the two client configurations users run, beside the two-client runs of the other
 * sections: one client shared by all 16 threads (as Redisson and Curator users share theirs), and
 * one client per thread (16 processes' worth). Redis contenders each get a redis-server of their
 * own; ZooKeeper contenders share one in-JVM server.
 */
final class ClientConfigurations {
  static final int[] CLIENT_COUNTS = {1, 16};

  private final RunPlan plan;
  private final MarkdownReport report;
  private final StringBuilder section;

  private ClientConfigurations(RunPlan plan, MarkdownReport report) {
    this.plan = plan;
    this.report = report;
    this.section = report.section(MarkdownReport.CLIENT_CONFIGURATIONS);
  }

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    ClientConfigurations configurations = new ClientConfigurations(plan, report);
    configurations.section.append(
        plan.threads()
            + " threads, "
            + plan.rounds()
            + " interleaved rounds of "
            + plan.segment().toMillis()
            + " ms per contender and configuration, as in S2 and S3; \"1 client\" is one client"
            + " (one connection, one ZooKeeper session) shared by every thread, \"16 clients\" is"
            + " one per thread. Redisson runs with its watchdog, the configuration that renews as"
            + " dlock's default lease does. Client CPU is the benchmark process's CPU time per"
            + " cycle (Redis only: the ZooKeeper server runs in the benchmark's JVM).\n\n");
    for (int clients : CLIENT_COUNTS) {
      configurations.redis(clients);
    }
    for (int clients : CLIENT_COUNTS) {
      configurations.zooKeeper(clients);
    }
  }

  /** A target that dlock's median throughput is at least {@code goal} times {@code peer}'s. */
  private void ratio(
      String target,
      Map<Locker, Result> results,
      Locker dlock,
      Locker peer,
      String unit,
      double goal) {
    double d = results.get(dlock).opsPerSec.median();
    double p = results.get(peer).opsPerSec.median();
    report.targets().atLeast(target, Fmt.num(d) + " vs " + Fmt.num(p) + " " + unit, d / p, goal);
  }

  /** A target on the ratio of dlock's median hand-off gap p50 to {@code peer}'s. */
  private void gapRatio(
      String target, Map<Locker, Result> results, Locker dlock, Locker peer, double goal) {
    double d = results.get(dlock).gapP50Us.median();
    double p = results.get(peer).gapP50Us.median();
    report.targets().atMost(target, Fmt.num(d) + " vs " + Fmt.num(p) + " µs", d / p, goal);
  }

  private static String label(int clients) {
    return clients == 1 ? "1 client" : clients + " clients";
  }

  private void redis(int clients) throws Exception {
    BenchmarkMain.progress("Redis S2, S3 with " + label(clients));
    List<RedisAdmin> servers = new ArrayList<>();
    List<Locker> lockers = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        servers.add(RedisAdmin.startServer());
      }
      Locker limit = new RedisLockers.Limit(servers.get(0).uri(), clients);
      Locker dlock = new RedisLockers.Dlock(servers.get(1).uri(), clients);
      Locker redisson = new RedisLockers.RedissonLocker(servers.get(2).uri(), clients, true);
      lockers.addAll(List.of(limit, dlock, redisson));
      Map<Locker, RedisAdmin> admins = new LinkedHashMap<>();
      for (int i = 0; i < 3; i++) {
        admins.put(lockers.get(i), servers.get(i));
      }
      Map<Locker, Result> s2 = Scenarios.run(Kind.DISTINCT, lockers, admins, plan.threads(), plan);
      Map<Locker, Result> s3 =
          Scenarios.run(Kind.CONTENDED, List.of(dlock, redisson), admins, plan.threads(), plan);
      section.append("### Redis, ").append(label(clients)).append("\n\n");
      section.append(
          "| contender | S2 cycles/s | S2 ratio to limit | S2 ratio to Redisson | S2 client CPU"
              + " µs/cycle | S3 acquisitions/s | S3 gap p50 µs | S3 gap p50 ratio to Redisson"
              + " | S3 gap p99 µs |\n|---|---|---|---|---|---|---|---|---|\n");
      for (Locker l : lockers) {
        Result r2 = s2.get(l);
        Result r3 = s3.get(l);
        section.append(
            row(
                l.name(),
                r2.opsPerSec.spread(),
                r2.opsPerSec.ratioTo(s2.get(limit).opsPerSec),
                r2.opsPerSec.ratioTo(s2.get(redisson).opsPerSec),
                r2.clientCpuUsPerCycle.spread(),
                r3 == null ? "—" : r3.opsPerSec.spread(),
                r3 == null ? "—" : r3.gapP50Us.spread(),
                r3 == null ? "—" : r3.gapP50Us.ratioTo(s3.get(redisson).gapP50Us),
                r3 == null ? "—" : r3.gapP99Us.spread()));
      }
      section.append('\n');
      String redisOn = "Redis S2, " + label(clients);
      ratio(redisOn + ": ≥ 0.8 of the limit", s2, dlock, limit, "cycles/s", 0.8);
      ratio(redisOn + ": ≥ 3 × Redisson (watchdog)", s2, dlock, redisson, "cycles/s", 3);
      gapRatio(
          "Redis S3, " + label(clients) + ": hand-off gap p50 ≤ 0.6 × Redisson's (watchdog)",
          s3,
          dlock,
          redisson,
          0.6);
    } finally {
      lockers.forEach(Locker::close);
      servers.forEach(RedisAdmin::close);
    }
  }

  private void zooKeeper(int clients) throws Exception {
    BenchmarkMain.progress("ZooKeeper S2, S3 with " + label(clients));
    try (TestingServer server = new TestingServer(true)) {
      String connect = server.getConnectString();
      List<Locker> lockers = new ArrayList<>();
      try {
        Locker dlock = new ZkLockers.Dlock(connect, clients);
        lockers.add(dlock);
        Locker curator = new ZkLockers.Curator(connect, clients);
        lockers.add(curator);
        Map<Locker, Result> s2 =
            Scenarios.run(Kind.DISTINCT, lockers, Map.of(), plan.threads(), plan);
        Map<Locker, Result> s3 =
            Scenarios.run(Kind.CONTENDED, lockers, Map.of(), plan.threads(), plan);
        section.append("### ZooKeeper, ").append(label(clients)).append("\n\n");
        section.append(
            "| contender | S2 cycles/s | S2 ratio to Curator | S3 acquisitions/s | S3 ratio to"
                + " Curator | S3 gap p50 µs | S3 gap p50 ratio to Curator | S3 gap p99 µs |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        for (Locker l : lockers) {
          Result r2 = s2.get(l);
          Result r3 = s3.get(l);
          section.append(
              row(
                  l.name(),
                  r2.opsPerSec.spread(),
                  r2.opsPerSec.ratioTo(s2.get(curator).opsPerSec),
                  r3.opsPerSec.spread(),
                  r3.opsPerSec.ratioTo(s3.get(curator).opsPerSec),
                  r3.gapP50Us.spread(),
                  r3.gapP50Us.ratioTo(s3.get(curator).gapP50Us),
                  r3.gapP99Us.spread()));
        }
        section.append('\n');
        String on = label(clients);
        ratio(
            "ZooKeeper S2, " + on + ": throughput ≥ Curator's", s2, dlock, curator, "cycles/s", 1);
        ratio(
            "ZooKeeper S3, " + on + ": throughput on one key ≥ Curator's",
            s3,
            dlock,
            curator,
            "acquisitions/s",
            1);
        gapRatio("ZooKeeper S3, " + on + ": hand-off gap p50 ≤ Curator's", s3, dlock, curator, 1);
      } finally {
        lockers.forEach(Locker::close);
      }
    }
  }
}
