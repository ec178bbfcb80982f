package io.dlock.bench;

import java.time.Duration;

/**
 * Durations and counts of one mode: the full run the report documents, or the {@code --quick} smoke
 * run.
 */
record RunPlan(
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
    int heapLeases,
    Election election,
    Semaphores semaphores) {

  /**
   * The leader-election part: {@code rounds} per system, each a graceful handover and a killed
   * leader; {@code bound} is what limits the time to a new leader after a crash, set alike for
   * every system (dlock's renewed lease, the ZooKeeper session timeout of dlock's and Curator's
   * clients), and {@code connectionTimeout} the ZooKeeper clients' connection timeout (dlock's and
   * Curator's).
   */
  record Election(int rounds, Duration bound, Duration connectionTimeout) {}

  /**
   * The leased-semaphore part: the throughput of {@code permits} permits shared by the plan's
   * threads, in {@code rounds} interleaved rounds of {@code segment} after a {@code warmup} per
   * system (a permit cycle with contention takes tens of milliseconds: the lock scenarios' quick
   * segments would hold a handful), and {@code killRounds} rounds per system of a killed holder's
   * permit coming back to a waiter, with {@code bound} set alike for every system (dlock's renewed
   * lease, Redisson's permit lease, the ZooKeeper session timeout) and {@code connectionTimeout}
   * the ZooKeeper clients' connection timeout.
   */
  record Semaphores(
      int permits,
      int rounds,
      Duration segment,
      Duration warmup,
      int killRounds,
      Duration bound,
      Duration connectionTimeout) {}

  /** This plan with another election part (the CI smoke test runs a shorter one). */
  RunPlan withElection(Election other) {
    return new RunPlan(
        quick,
        rounds,
        segment,
        warmup,
        threads,
        heldSizes,
        hold,
        renewedLease,
        waiterSizes,
        maxHandoffs,
        heapLeases,
        other,
        semaphores);
  }

  /** This plan with another semaphore part (the CI smoke test runs a shorter one). */
  RunPlan withSemaphores(Semaphores other) {
    return new RunPlan(
        quick,
        rounds,
        segment,
        warmup,
        threads,
        heldSizes,
        hold,
        renewedLease,
        waiterSizes,
        maxHandoffs,
        heapLeases,
        election,
        other);
  }

  static RunPlan fullPlan() {
    return new RunPlan(
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
        100_000,
        new Election(20, Duration.ofSeconds(3), Duration.ofSeconds(1)),
        new Semaphores(
            4,
            5,
            Duration.ofSeconds(2),
            Duration.ofSeconds(1),
            20,
            Duration.ofSeconds(3),
            Duration.ofSeconds(1)));
  }

  static RunPlan quickPlan() {
    // Every scenario and table of the full run, each as short as still gives a figure: CI runs it
    // as a smoke test (QuickModeIT), so its cost is paid on every submission.
    return new RunPlan(
        true,
        1,
        Duration.ofMillis(150),
        Duration.ofMillis(100),
        16,
        new int[] {100, 1_000},
        Duration.ofSeconds(1),
        Duration.ofMillis(600),
        new int[] {10, 50, 200},
        10,
        2_000,
        // A few rounds at the full run's bounds (its figures are seconds of timers): about 25 s.
        new Election(5, Duration.ofSeconds(3), Duration.ofSeconds(1)),
        // 1.5 s of throughput per system (about 10 s), then 3 killed-holder rounds at the full
        // run's bound, all systems at once (about 12 s).
        new Semaphores(
            4,
            1,
            Duration.ofSeconds(1),
            Duration.ofMillis(500),
            3,
            Duration.ofSeconds(3),
            Duration.ofSeconds(1)));
  }
}
