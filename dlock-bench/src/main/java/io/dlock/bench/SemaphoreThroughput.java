package io.dlock.bench;

import static io.dlock.bench.Fmt.micros;
import static io.dlock.bench.Fmt.row;

import io.dlock.LockClientOptions;
import io.dlock.bench.Scenarios.Kind;
import io.dlock.bench.Scenarios.Result;
import io.dlock.jdbc.JdbcLockSettings;
import io.dlock.jdbc.JdbcLocks;
import io.dlock.redis.RedisLocks;
import io.dlock.zookeeper.ZooKeeperLockSettings;
import io.dlock.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The permit throughput of the semaphore comparison: the plan's threads (16) in one client per
 * system take and give back one permit each of one semaphore with a few permits (4), so that the
 * threads contend for them, in the interleaved rounds of the lock scenarios ({@link Scenarios}).
 */
final class SemaphoreThroughput {
  /** One row: a contender, its server, and the dlock row on the same server (null for dlock's). */
  private record Row(Locker locker, String server, String lease, Locker dlock) {}

  private final RunPlan plan;
  private final List<Row> rows;
  private final Map<Locker, Result> results;

  private SemaphoreThroughput(RunPlan plan, List<Row> rows, Map<Locker, Result> results) {
    this.plan = plan;
    this.rows = rows;
    this.results = results;
  }

  static SemaphoreThroughput run(RunPlan plan, SemaphoreComparison.Servers servers)
      throws Exception {
    BenchmarkMain.progress(
        "Leased semaphores: permit throughput, "
            + plan.threads()
            + " threads on "
            + plan.semaphores().permits()
            + " permits");
    int permits = plan.semaphores().permits();
    String prefix = "bench-semaphore-" + Long.toHexString(System.currentTimeMillis()) + "-";
    String redisUri = servers.redis().uri();
    String zk = servers.zk().getConnectString();
    String dlockLease = "renewed lease 30 s (the default)";
    List<Row> rows = new ArrayList<>();
    try {
      Locker dlockRedis =
          new SemaphoreLockers.Dlock(
              "dlock on Redis", RedisLocks.newClient(redisUri), prefix, permits);
      rows.add(new Row(dlockRedis, "Redis", dlockLease, null));
      rows.add(
          new Row(
              new SemaphoreLockers.Redisson(
                  RedisLockers.RedissonLocker.create(redisUri, RedisLockers.LEASE_MS),
                  prefix,
                  permits),
              "Redis",
              "none",
              dlockRedis));
      rows.add(
          new Row(
              new SemaphoreLockers.RedissonExpirable(
                  RedisLockers.RedissonLocker.create(redisUri, RedisLockers.LEASE_MS),
                  prefix,
                  permits,
                  Duration.ofMillis(RedisLockers.LEASE_MS)),
              "Redis",
              "lease 30 s (not renewed)",
              dlockRedis));
      Locker dlockZk =
          new SemaphoreLockers.Dlock(
              "dlock on ZooKeeper",
              ZooKeeperLocks.newClient(
                  ZooKeeperLockSettings.of(zk).withRootPath("/bench-semaphore-dlock"),
                  LockClientOptions.defaults()),
              prefix,
              permits);
      // Both ask for a 30 s session; the server grants at most 20 ticks (10 s): nothing here waits
      // for a session to end, so the length does not show in the figures.
      String session = "session (30 s asked, 10 s granted)";
      rows.add(new Row(dlockZk, "ZooKeeper", session, null));
      rows.add(
          new Row(
              new SemaphoreLockers.Curator(ZkLockers.curator(zk), prefix, permits),
              "ZooKeeper",
              session,
              dlockZk));
      if (servers.postgres() != null) {
        rows.add(
            new Row(
                new SemaphoreLockers.Dlock(
                    "dlock lease row on PostgreSQL",
                    JdbcLocks.newClient(
                        JdbcLockSettings.of(servers.postgres())
                            .withTable("dlock_bench_locks")
                            .withCreateSchema(true)
                            .withMaxConcurrentCalls(JdbcLockers.POOL),
                        LockClientOptions.defaults()),
                    prefix,
                    permits),
                "PostgreSQL",
                dlockLease,
                null));
      }
      List<Locker> lockers = rows.stream().map(Row::locker).toList();
      Map<Locker, RedisAdmin> admins = new LinkedHashMap<>();
      for (Row r : rows) {
        if (r.server().equals("Redis")) {
          admins.put(r.locker(), servers.redis());
        }
      }
      // SOLO: every thread on the one name, without the hand-off bookkeeping of CONTENDED (which
      // assumes a single holder at a time).
      RunPlan.Semaphores s = plan.semaphores();
      Map<Locker, Result> results =
          Scenarios.run(
              Kind.SOLO, lockers, admins, plan.threads(), s.rounds(), s.segment(), s.warmup());
      return new SemaphoreThroughput(plan, rows, results);
    } finally {
      rows.forEach(r -> r.locker().close());
    }
  }

  /** Writes the throughput table and its targets. */
  void write(StringBuilder t, Targets targets) {
    t.append(
        plan.threads()
            + " threads in one client per system (one process's worth) take and give back one"
            + " permit each of one semaphore of "
            + plan.semaphores().permits()
            + " permits, so that they contend for them; "
            + plan.semaphores().rounds()
            + (plan.semaphores().rounds() == 1 ? " round" : " interleaved rounds")
            + " of "
            + plan.semaphores().segment().toMillis()
            + " ms per system after a warm-up of "
            + plan.semaphores().warmup().toMillis()
            + " ms, with the lock scenarios' harness. A cycle is an acquisition (bounded wait of"
            + " a minute) and its release, no work in between; latency is of the whole cycle,"
            + " waiting included. One redis-server for dlock and both Redisson semaphores, one"
            + " in-JVM ZooKeeper (curator-test `TestingServer`) for dlock and Curator, PostgreSQL"
            + " from `DLOCK_TEST_POSTGRES_URL` (dlock with 4 connections). Redis commands are"
            + " counted on that server with `INFO commandstats`, as in S2. The ratio is of median"
            + " ops/s, dlock's on the same server over the peer's (round range in parentheses);"
            + " no JDBC library has a semaphore to compare with.\n\n");
    t.append(
        "| system | server | lease | ops/s median (min–max) | p50 µs | p99 µs | Redis"
            + " commands/cycle | dlock on this server, ratio to it |\n"
            + "|---|---|---|---|---|---|---|---|\n");
    for (Row r : rows) {
      Result res = results.get(r.locker());
      t.append(
          row(
              r.locker().name(),
              r.server(),
              r.lease(),
              res.opsPerSec.spread(),
              micros(res.latency, 50),
              micros(res.latency, 99),
              res.commandsPerCycle.isEmpty()
                  ? "—"
                  : res.commandsPerCycle.spread() + " (" + res.commandBreakdown + ")",
              r.dlock() == null ? "—" : results.get(r.dlock()).opsPerSec.ratioTo(res.opsPerSec)));
    }
    for (Row r : rows) {
      if (r.locker() instanceof SemaphoreLockers.RedissonExpirable
          || r.locker() instanceof SemaphoreLockers.Curator) {
        double d = results.get(r.dlock()).opsPerSec.median();
        double p = results.get(r.locker()).opsPerSec.median();
        targets.atLeast(
            "Semaphores on "
                + r.server()
                + ": permit throughput ≥ the leased peer's ("
                + r.locker().name()
                + "; "
                + plan.threads()
                + " threads, "
                + plan.semaphores().permits()
                + " permits)",
            Fmt.num(d) + " vs " + Fmt.num(p) + " ops/s",
            d / p,
            1);
      }
    }
  }
}
