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
      Targets targets = report.targets();
      double d2 = s2.get(dlock).opsPerSec.median();
      double l2 = s2.get(limit).opsPerSec.median();
      double r2 = s2.get(redisson).opsPerSec.median();
      targets.atLeast(
          "Redis S2, " + label(clients) + ": ≥ 0.8 of the limit",
          Fmt.num(d2) + " vs " + Fmt.num(l2) + " cycles/s",
          d2 / l2,
          0.8);
      targets.atLeast(
          "Redis S2, " + label(clients) + ": ≥ 3 × Redisson (watchdog)",
          Fmt.num(d2) + " vs " + Fmt.num(r2) + " cycles/s",
          d2 / r2,
          3);
      double dGap = s3.get(dlock).gapP50Us.median();
      double rGap = s3.get(redisson).gapP50Us.median();
      targets.atMost(
          "Redis S3, " + label(clients) + ": hand-off gap p50 ≤ 0.6 × Redisson's (watchdog)",
          Fmt.num(dGap) + " vs " + Fmt.num(rGap) + " µs",
          dGap / rGap,
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
        Targets targets = report.targets();
        double d2 = s2.get(dlock).opsPerSec.median();
        double c2 = s2.get(curator).opsPerSec.median();
        targets.atLeast(
            "ZooKeeper S2, " + label(clients) + ": throughput ≥ Curator's",
            Fmt.num(d2) + " vs " + Fmt.num(c2) + " cycles/s",
            d2 / c2,
            1);
        double d3 = s3.get(dlock).opsPerSec.median();
        double c3 = s3.get(curator).opsPerSec.median();
        targets.atLeast(
            "ZooKeeper S3, " + label(clients) + ": throughput on one key ≥ Curator's",
            Fmt.num(d3) + " vs " + Fmt.num(c3) + " acquisitions/s",
            d3 / c3,
            1);
        double dGap = s3.get(dlock).gapP50Us.median();
        double cGap = s3.get(curator).gapP50Us.median();
        targets.atMost(
            "ZooKeeper S3, " + label(clients) + ": hand-off gap p50 ≤ Curator's",
            Fmt.num(dGap) + " vs " + Fmt.num(cGap) + " µs",
            dGap / cGap,
            1);
      } finally {
        lockers.forEach(Locker::close);
      }
    }
  }
}
