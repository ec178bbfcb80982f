package io.dlock.bench;

import static io.dlock.bench.Fmt.micros;
import static io.dlock.bench.Fmt.percent;
import static io.dlock.bench.Fmt.row;

import io.dlock.bench.Scenarios.Kind;
import io.dlock.bench.Scenarios.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.TestingServer;

/**
 * S1, S2 and S3 on ZooKeeper: the limit, dlock and Curator's InterProcessMutex, all on one in-JVM
 * server (curator-test {@code TestingServer}); writes the ZooKeeper section and its targets.
 */
final class ZooKeeperComparison {
  private ZooKeeperComparison() {}

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    BenchmarkMain.progress("ZooKeeper S1, S2, S3");
    StringBuilder t = report.section(MarkdownReport.ZOOKEEPER);
    report.versions().addServer("ZooKeeper", org.apache.zookeeper.Version.getFullVersion());
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
        Map<Locker, Result> s1 = Scenarios.run(Kind.SOLO, lockers, Map.of(), 1, plan);
        Map<Locker, Result> s2 =
            Scenarios.run(Kind.DISTINCT, lockers, Map.of(), plan.threads(), plan);
        List<Locker> waiting = List.of(dlock, curator);
        Map<Locker, Result> s3 =
            Scenarios.run(Kind.CONTENDED, waiting, Map.of(), plan.threads(), plan);
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
                  micros(s1.get(l).latency, 50),
                  micros(s1.get(l).latency, 99),
                  s2.get(l).opsPerSec.spread(),
                  s2.get(l).opsPerSec.ratioTo(s2.get(curator).opsPerSec),
                  s2.get(l).opsPerSec.ratioTo(s2.get(limit).opsPerSec)));
          report.charts().addS1Latency("ZooKeeper " + l.name(), s1.get(l).latency);
        }
        t.append("\n### ZooKeeper S3: 16 threads, one key\n\n");
        t.append(Scenarios.contendedIntro(plan, "ZooKeeper (the same one)"));
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
                  micros(r.gap, 99.9),
                  percent(r.bargingShare)));
          report.charts().addS3Gap("ZooKeeper " + l.name(), r.gap);
        }
        Targets targets = report.targets();
        targets.atLeast(
            "ZooKeeper: throughput ≥ Curator's (S2, 16 threads)",
            Fmt.num(s2.get(dlock).opsPerSec.median())
                + " vs "
                + Fmt.num(s2.get(curator).opsPerSec.median())
                + " cycles/s",
            s2.get(dlock).opsPerSec.median() / s2.get(curator).opsPerSec.median(),
            1);
        targets.atLeast(
            "ZooKeeper: throughput ≥ Curator's (S1, one thread)",
            Fmt.num(s1.get(dlock).opsPerSec.median())
                + " vs "
                + Fmt.num(s1.get(curator).opsPerSec.median())
                + " ops/s",
            s1.get(dlock).opsPerSec.median() / s1.get(curator).opsPerSec.median(),
            1);
        targets.atMost(
            "ZooKeeper: hand-off gap p99 ≤ Curator's (S3)",
            Fmt.num(s3.get(dlock).gapP99Us.median())
                + " vs "
                + Fmt.num(s3.get(curator).gapP99Us.median())
                + " µs",
            s3.get(dlock).gapP99Us.median() / s3.get(curator).gapP99Us.median(),
            1);
      } finally {
        lockers.forEach(Locker::close);
      }
    }
  }
}
