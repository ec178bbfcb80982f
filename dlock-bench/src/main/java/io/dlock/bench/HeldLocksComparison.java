package io.dlock.bench;

import static io.dlock.bench.Fmt.row;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * S4 (many locks held with renewal), S5 (many waiters on one lock) and S6 (heap for 100,000 held
 * leases), dlock next to Redisson's watchdog, measured with {@link HeldLocks}; writes the three
 * sections, their targets and the S4 chart's series.
 */
final class HeldLocksComparison {
  private static final String REDISSON = "Redisson RLock (watchdog)";

  private final RunPlan plan;
  private final MarkdownReport report;

  private HeldLocksComparison(RunPlan plan, MarkdownReport report) {
    this.plan = plan;
    this.report = report;
  }

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    HeldLocksComparison comparison = new HeldLocksComparison(plan, report);
    comparison.s4();
    comparison.s5();
    comparison.s6();
  }

  private void s4() throws Exception {
    BenchmarkMain.progress("S4");
    StringBuilder t4 = report.section(MarkdownReport.S4_HELD_LOCKS);
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
        double[] d = heldRow(t4, "dlock", n, d0, d1, dHeap);
        double[] r = heldRow(t4, REDISSON, n, r0, r1, rHeap);
        dPoints.add(new double[] {n, d[0], d[2]});
        rPoints.add(new double[] {n, r[0], r[2]});
        worstRequestsPerTick = Math.max(worstRequestsPerTick, d[1]);
        worstHeap = Math.max(worstHeap, dHeap);
        dlock.releaseAll();
        redisson.releaseAll();
      }
    }
    ReportCharts charts = report.charts();
    charts.addS4Series("dlock commands/s (incl. inside scripts)", points(dPoints, 1));
    charts.addS4Series("Redisson watchdog commands/s (incl. inside scripts)", points(rPoints, 1));
    charts.addS4Series("dlock requests/s", points(dPoints, 2));
    charts.addS4Series("Redisson watchdog requests/s", points(rPoints, 2));
    Targets targets = report.targets();
    targets.atMost(
        "S4: one request per renewal tick per client, whatever the number of held locks",
        Fmt.num(worstRequestsPerTick)
            + " requests per tick (worst size; held locks / locks renewed per request)",
        worstRequestsPerTick,
        1.05);
    targets.atMost(
        "S4: ≤ 300 bytes of heap per held lease",
        Fmt.num(worstHeap) + " bytes (worst size)",
        worstHeap,
        300);
  }

  /** Column {@code column} of each point against its held-lock count, as a chart series. */
  private static double[][] points(List<double[]> ps, int column) {
    double[][] out = new double[2][ps.size()];
    for (int i = 0; i < ps.size(); i++) {
      out[0][i] = ps.get(i)[0];
      out[1][i] = ps.get(i)[column];
    }
    return out;
  }

  /** One S4 row; returns {commands/s, requests per tick, requests/s}. */
  private static double[] heldRow(
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

  private void s5() throws Exception {
    BenchmarkMain.progress("S5");
    StringBuilder t5 = report.section(MarkdownReport.S5_WAITERS);
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
              REDISSON,
              Integer.toString(w),
              Fmt.num(r.commandsPerHandoff()),
              Fmt.num(r.requestsPerHandoff()),
              r.breakdown()));
      worstRequests = Math.max(worstRequests, d.requestsPerHandoff());
      minRequests = Math.min(minRequests, d.requestsPerHandoff());
      worstCommands = Math.max(worstCommands, d.commandsPerHandoff());
    }
    Targets targets = report.targets();
    targets.atMost(
        "S5: ≤ 3 server requests per hand-off, flat from "
            + Fmt.num(plan.waiterSizes()[0])
            + " to "
            + Fmt.num(plan.waiterSizes()[plan.waiterSizes().length - 1])
            + " waiters",
        Fmt.num(minRequests) + "–" + Fmt.num(worstRequests) + " requests per hand-off",
        worstRequests,
        3);
    targets.atMost(
        "S5: ≤ 3 server commands per hand-off counting commands inside scripts (strict reading)",
        Fmt.num(worstCommands) + " commands per hand-off (worst)",
        worstCommands,
        3);
  }

  private void s6() throws Exception {
    BenchmarkMain.progress("S6");
    StringBuilder t6 = report.section(MarkdownReport.S6_HEAP);
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
      t6.append(row(REDISSON, Fmt.num(n), Fmt.num(per), Fmt.num(per * 1e5 / 1e6)));
      redisson.releaseAll();
    }
    report
        .targets()
        .atMost("S6: < 30 MB of heap for 100,000 held leases", Fmt.num(dMb) + " MB", dMb, 30);
  }
}
