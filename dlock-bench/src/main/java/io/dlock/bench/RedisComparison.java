package io.dlock.bench;

import static io.dlock.bench.Fmt.micros;
import static io.dlock.bench.Fmt.percent;
import static io.dlock.bench.Fmt.row;

import io.dlock.bench.Scenarios.Kind;
import io.dlock.bench.Scenarios.Result;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * S1, S2 and S3 on Redis: the limit, dlock and both Redisson variants, each on a redis-server of
 * its own so that commands can be counted per contender; writes the three Redis sections and their
 * targets.
 */
final class RedisComparison {
  private final RunPlan plan;
  private final MarkdownReport report;
  private final List<Locker> lockers;
  private final Map<Locker, RedisAdmin> admins;
  private final Locker limit;
  private final Locker dlock;
  private final List<Locker> redisson;

  private RedisComparison(
      RunPlan plan, MarkdownReport report, List<Locker> lockers, Map<Locker, RedisAdmin> admins) {
    this.plan = plan;
    this.report = report;
    this.lockers = lockers;
    this.admins = admins;
    limit = lockers.get(0);
    dlock = lockers.get(1);
    redisson = lockers.subList(2, 4);
  }

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    List<RedisAdmin> servers = new ArrayList<>();
    List<Locker> lockers = new ArrayList<>();
    Map<Locker, RedisAdmin> admins = new LinkedHashMap<>();
    try {
      for (int i = 0; i < 4; i++) {
        servers.add(RedisAdmin.startServer());
      }
      report.versions().addServer("Redis server", servers.get(0).version());
      // Two clients per contender: the 16 threads of S3 come from two "processes".
      lockers.add(new RedisLockers.Limit(servers.get(0).uri()));
      lockers.add(new RedisLockers.Dlock(servers.get(1).uri(), 2));
      lockers.add(new RedisLockers.RedissonLocker(servers.get(2).uri(), 2, false));
      lockers.add(new RedisLockers.RedissonLocker(servers.get(3).uri(), 2, true));
      for (int i = 0; i < 4; i++) {
        admins.put(lockers.get(i), servers.get(i));
      }
      RedisComparison comparison = new RedisComparison(plan, report, lockers, admins);
      comparison.s1();
      comparison.s2();
      comparison.s3();
    } finally {
      lockers.forEach(Locker::close);
      servers.forEach(RedisAdmin::close);
    }
  }

  private void s1() throws Exception {
    BenchmarkMain.progress("Redis S1");
    Map<Locker, Result> s1 = Scenarios.run(Kind.SOLO, lockers, admins, 1, plan);
    StringBuilder t1 = report.section(MarkdownReport.REDIS_S1);
    t1.append(
        "One thread acquires and releases one key, uncontended, "
            + plan.rounds()
            + " interleaved rounds of "
            + plan.segment().toMillis()
            + " ms per contender. Each contender on its own redis-server. Client CPU is the"
            + " benchmark process's CPU time (every thread: the caller, the client library's I/O"
            + " threads, GC, JIT) per cycle; the servers run in processes of their own.\n\n");
    t1.append(
        "| contender | ops/s median (min–max) | ratio to limit (round range) | ratio to best"
            + " Redisson | p50 µs | p99 µs | p999 µs | commands/cycle | client CPU µs/cycle"
            + " | client CPU ratio to limit |\n"
            + "|---|---|---|---|---|---|---|---|---|---|\n");
    Result bestRedisson1 = best(s1, redisson);
    for (Locker l : lockers) {
      Result r = s1.get(l);
      t1.append(
          row(
              l.name(),
              r.opsPerSec.spread(),
              r.opsPerSec.ratioTo(s1.get(limit).opsPerSec),
              r.opsPerSec.ratioTo(bestRedisson1.opsPerSec),
              micros(r.latency, 50),
              micros(r.latency, 99),
              micros(r.latency, 99.9),
              r.commandsPerCycle.spread(),
              r.clientCpuUsPerCycle.spread(),
              r.clientCpuUsPerCycle.ratioTo(s1.get(limit).clientCpuUsPerCycle)));
      report.charts().addS1Latency("Redis " + l.name(), r.latency);
    }
    double s1Ratio = s1.get(dlock).opsPerSec.median() / s1.get(limit).opsPerSec.median();
    report
        .targets()
        .atLeast(
            "Redis S1: ≥ 0.9 of the limit's ops/s",
            Fmt.num(s1.get(dlock).opsPerSec.median())
                + " vs "
                + Fmt.num(s1.get(limit).opsPerSec.median())
                + " ops/s",
            s1Ratio,
            0.9);
    Fmt.Series dlockCpu = s1.get(dlock).clientCpuUsPerCycle;
    Fmt.Series limitCpu = s1.get(limit).clientCpuUsPerCycle;
    report
        .targets()
        .atMost(
            "Redis S1: client CPU per cycle ≤ 1.1 × the limit's (hand-written Lettuce SET NX PX +"
                + " EVALSHA)",
            Fmt.num(dlockCpu.median()) + " vs " + Fmt.num(limitCpu.median()) + " µs/cycle",
            dlockCpu.median() / limitCpu.median(),
            1.1);
  }

  private void s2() throws Exception {
    BenchmarkMain.progress("Redis S2");
    Map<Locker, Result> s2 = Scenarios.run(Kind.DISTINCT, lockers, admins, plan.threads(), plan);
    Result bestRedisson2 = best(s2, redisson);
    StringBuilder t2 = report.section(MarkdownReport.REDIS_S2);
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
              micros(r.latency, 50),
              micros(r.latency, 99),
              r.commandBreakdown));
    }
    Result d2 = s2.get(dlock);
    Targets targets = report.targets();
    targets.atLeast(
        "Redis S2: ≥ 0.8 of the limit",
        Fmt.num(d2.opsPerSec.median())
            + " vs "
            + Fmt.num(s2.get(limit).opsPerSec.median())
            + " cycles/s",
        d2.opsPerSec.median() / s2.get(limit).opsPerSec.median(),
        0.8);
    targets.atLeast(
        "Redis S2: ≥ 3 × Redisson (the faster variant: " + bestRedisson2.name + ")",
        Fmt.num(d2.opsPerSec.median())
            + " vs "
            + Fmt.num(bestRedisson2.opsPerSec.median())
            + " cycles/s",
        d2.opsPerSec.median() / bestRedisson2.opsPerSec.median(),
        3);
    targets.atMost(
        "Redis S2: ≤ 7 Redis commands per cycle",
        Fmt.num(d2.commandsPerCycle.median()) + " commands/cycle (" + d2.commandBreakdown + ")",
        d2.commandsPerCycle.median(),
        7);
  }

  private void s3() throws Exception {
    BenchmarkMain.progress("Redis S3");
    // The limit cannot wait: it only polls, so it has no hand-off to measure.
    List<Locker> waiting = List.of(dlock, redisson.get(0), redisson.get(1));
    Map<Locker, Result> s3 = Scenarios.run(Kind.CONTENDED, waiting, admins, plan.threads(), plan);
    StringBuilder t3 = report.section(MarkdownReport.REDIS_S3);
    t3.append(Scenarios.contendedIntro(plan, "redis-server"));
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
              micros(r.gap, 99.9),
              percent(r.bargingShare),
              r.commandsPerCycle.spread(),
              r.requestsPerCycle.spread()));
      report.charts().addS3Gap("Redis " + l.name(), r.gap);
    }
    t3.append(
        "\nThe limit is not in this table: a bare SET NX PX has no way to wait but polling.\n");
    Result d3 = s3.get(dlock);
    Targets targets = report.targets();
    targets.atMost(
        "Redis S3: hand-off gap p50 ≤ 400 µs",
        Fmt.num(d3.gapP50Us.median()) + " µs",
        d3.gapP50Us.median(),
        400);
    targets.atMost(
        "Redis S3: hand-off gap p99 ≤ ½ of Redisson's (" + bestGap.name + ")",
        Fmt.num(d3.gapP99Us.median()) + " vs " + Fmt.num(bestGap.gapP99Us.median()) + " µs",
        d3.gapP99Us.median() / bestGap.gapP99Us.median(),
        0.5);
  }

  /** The contender among {@code among} with the highest median operations per second. */
  private static Result best(Map<Locker, Result> results, List<Locker> among) {
    return bestBy(results, among, r -> r.opsPerSec.median());
  }

  private static Result bestBy(
      Map<Locker, Result> results, List<Locker> among, ToDoubleFunction<Result> score) {
    Result best = null;
    for (Locker l : among) {
      Result r = results.get(l);
      if (best == null || score.applyAsDouble(r) > score.applyAsDouble(best)) {
        best = r;
      }
    }
    return best;
  }
}
