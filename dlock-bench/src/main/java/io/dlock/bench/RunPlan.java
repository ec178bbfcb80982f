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
    int heapLeases) {

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
        100_000);
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
        2_000);
  }
}
