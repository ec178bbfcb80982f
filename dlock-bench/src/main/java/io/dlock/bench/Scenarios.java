package io.dlock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * S1 (one thread, one key), S2 (16 threads, distinct keys) and S3 (16 threads, one key), for any
 * set of contenders. Rounds are interleaved (the order flips every round) so that the machine's
 * noise hits every contender alike; each figure keeps its per-round values for the spread.
 */
final class Scenarios {
  enum Kind {
    SOLO,
    DISTINCT,
    CONTENDED
  }

  /** Everything measured for one contender in one scenario. */
  static final class Result {
    final String name;
    final Fmt.Series opsPerSec = new Fmt.Series();
    final Fmt.Series commandsPerCycle = new Fmt.Series();
    final Fmt.Series requestsPerCycle = new Fmt.Series();
    final Fmt.Series serverCpuUsPerCycle = new Fmt.Series();

    /**
     * CPU time of the benchmark's whole process per cycle (all threads: the callers, the client
     * library's I/O threads, GC and JIT): the client's cost where the servers run in processes of
     * their own (Redis), not where they run in this JVM (ZooKeeper).
     */
    final Fmt.Series clientCpuUsPerCycle = new Fmt.Series();

    final Fmt.Series gapP50Us = new Fmt.Series();
    final Fmt.Series gapP99Us = new Fmt.Series();
    final Fmt.Series bargingShare = new Fmt.Series();
    final Histogram latency = newHistogram();
    final Histogram gap = newHistogram();
    String commandBreakdown = "";

    Result(String name) {
      this.name = name;
    }
  }

  static Histogram newHistogram() {
    return new Histogram(Duration.ofMinutes(2).toNanos(), 3);
  }

  private Scenarios() {}

  /**
   * Runs one scenario over all contenders, with the rounds, segment and warm-up of {@code plan}.
   *
   * @param admins each contender's own Redis server, to count commands (empty for other backends)
   */
  static Map<Locker, Result> run(
      Kind kind, List<Locker> lockers, Map<Locker, RedisAdmin> admins, int threads, RunPlan plan)
      throws Exception {
    return run(kind, lockers, admins, threads, plan.rounds(), plan.segment(), plan.warmup());
  }

  /**
   * As {@link #run(Kind, List, Map, int, RunPlan)}, with rounds, segment and warm-up of their own
   * (the semaphores' cycles are slower than a lock's: their quick run needs longer segments).
   */
  static Map<Locker, Result> run(
      Kind kind,
      List<Locker> lockers,
      Map<Locker, RedisAdmin> admins,
      int threads,
      int rounds,
      Duration segment,
      Duration warmup)
      throws Exception {
    Map<Locker, Result> results = new LinkedHashMap<>();
    for (Locker locker : lockers) {
      results.put(locker, new Result(locker.name()));
      segment(kind, locker, threads, warmup, null, null);
    }
    for (int round = 0; round < rounds; round++) {
      List<Locker> order = new ArrayList<>(lockers);
      if (round % 2 == 1) {
        java.util.Collections.reverse(order);
      }
      for (Locker locker : order) {
        segment(kind, locker, threads, segment, results.get(locker), admins.get(locker));
      }
    }
    return results;
  }

  /** CPU time of this process so far, in nanoseconds, or -1 where the JVM cannot tell. */
  static long processCpuNanos() {
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }

  /** The paragraph that says how S3 is run and what its figures mean, for any backend's table. */
  static String contendedIntro(RunPlan plan, String server) {
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

  /** Shared by the workers of a contended segment: who released last, and when it started. */
  private static final class Baton {
    volatile long releaseStart;
    volatile int releaser = -1;
  }

  private static void segment(
      Kind kind, Locker locker, int threads, Duration duration, Result result, RedisAdmin admin)
      throws Exception {
    RedisAdmin.Snapshot before = null;
    if (admin != null && result != null) {
      admin.reset();
      before = admin.snapshot();
    }
    Histogram[] latencies = new Histogram[threads];
    Histogram[] gaps = new Histogram[threads];
    long[] cycles = new long[threads];
    long[] handoffs = new long[threads];
    long[] barged = new long[threads];
    Baton baton = new Baton();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long cpuBefore = processCpuNanos();
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int me = t;
      latencies[t] = newHistogram();
      gaps[t] = newHistogram();
      Thread worker =
          new Thread(
              () -> {
                try {
                  long n = 0;
                  while (System.nanoTime() < end && failure.get() == null) {
                    String key =
                        switch (kind) {
                          case SOLO -> "s1";
                          case DISTINCT -> "s2-" + me;
                          case CONTENDED -> "s3";
                        };
                    if (locker.rotatesKeys() && kind != Kind.CONTENDED) {
                      key = key + "-" + (n % 16);
                    }
                    long t0 = System.nanoTime();
                    Locker.Held held = locker.acquire(me, key);
                    long acquired = System.nanoTime();
                    if (kind == Kind.CONTENDED) {
                      long previous = baton.releaseStart;
                      int previousHolder = baton.releaser;
                      if (previous != 0) {
                        gaps[me].recordValue(Math.max(0, acquired - previous));
                        handoffs[me]++;
                        if (previousHolder == me) {
                          barged[me]++;
                        }
                      }
                      baton.releaser = me;
                      baton.releaseStart = System.nanoTime();
                    }
                    held.release();
                    latencies[me].recordValue(System.nanoTime() - t0);
                    n++;
                  }
                  cycles[me] = n;
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "bench-" + locker.name() + "-" + t);
      workers.add(worker);
      worker.start();
    }
    for (Thread worker : workers) {
      worker.join();
    }
    long elapsed = System.nanoTime() - start;
    long cpuUsed = processCpuNanos() - cpuBefore;
    if (failure.get() != null) {
      throw new IllegalStateException(locker.name() + " failed", failure.get());
    }
    if (result == null) {
      return;
    }
    long total = 0;
    long totalHandoffs = 0;
    long totalBarged = 0;
    Histogram segmentGaps = newHistogram();
    for (int t = 0; t < threads; t++) {
      total += cycles[t];
      totalHandoffs += handoffs[t];
      totalBarged += barged[t];
      result.latency.add(latencies[t]);
      segmentGaps.add(gaps[t]);
    }
    result.opsPerSec.add(total / (elapsed / 1e9));
    if (cpuBefore >= 0 && total > 0) {
      result.clientCpuUsPerCycle.add(cpuUsed / 1e3 / total);
    }
    if (kind == Kind.CONTENDED && totalHandoffs > 0) {
      result.gap.add(segmentGaps);
      result.gapP50Us.add(segmentGaps.getValueAtPercentile(50) / 1e3);
      result.gapP99Us.add(segmentGaps.getValueAtPercentile(99) / 1e3);
      result.bargingShare.add(totalBarged / (double) totalHandoffs);
    }
    if (before != null) {
      RedisAdmin.Snapshot after = admin.snapshot();
      result.commandsPerCycle.add((after.totalCalls() - before.totalCalls()) / (double) total);
      result.requestsPerCycle.add(
          (after.requests(locker) - before.requests(locker)) / (double) total);
      result.serverCpuUsPerCycle.add((after.cpuSeconds() - before.cpuSeconds()) * 1e6 / total);
      result.commandBreakdown = after.breakdown(total);
    }
  }
}
