package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RetryBackoff}: jittered pauses under a ceiling that doubles up to the cap. */
class RetryBackoffTest {

  private static final int STEPS = 12;
  private static final int RUNS = 2_000;

  /** The ceiling of the n-th pause (from 0): 5 ms doubled n times, at most 500 ms. */
  private static long ceiling(int step) {
    long c = RetryBackoff.INITIAL_NANOS;
    for (int i = 0; i < step; i++) {
      c = Math.min(RetryBackoff.CAP_NANOS, c * 2);
    }
    return c;
  }

  @Test
  void theCeilingsAreFiveMillisecondsDoublingUpToHalfASecond() {
    assertThat(RetryBackoff.INITIAL_NANOS).isEqualTo(5_000_000L);
    assertThat(RetryBackoff.CAP_NANOS).isEqualTo(500_000_000L);
    List<Long> ceilings = new ArrayList<>();
    for (int step = 0; step < 9; step++) {
      ceilings.add(ceiling(step) / 1_000_000L);
    }
    assertThat(ceilings).containsExactly(5L, 10L, 20L, 40L, 80L, 160L, 320L, 500L, 500L);
  }

  @Test
  void everyPauseLiesBetweenHalfItsCeilingAndTheCeiling_neverAboveTheCap() {
    long[] min = new long[STEPS];
    long[] max = new long[STEPS];
    java.util.Arrays.fill(min, Long.MAX_VALUE);
    for (int run = 0; run < RUNS; run++) {
      RetryBackoff backoff = new RetryBackoff();
      for (int step = 0; step < STEPS; step++) {
        long pause = backoff.nextNanos();
        assertThat(pause)
            .as("pause %d of run %d", step, run)
            .isBetween(ceiling(step) / 2, ceiling(step))
            .isLessThanOrEqualTo(RetryBackoff.CAP_NANOS);
        min[step] = Math.min(min[step], pause);
        max[step] = Math.max(max[step], pause);
      }
    }
    for (int step = 0; step < STEPS; step++) {
      long c = ceiling(step);
      // The ceiling really is reached at each step (it doubled), and the pauses are spread over
      // the whole range, not fixed (with 2,000 uniform draws, missing the outer 10% of either end
      // has a probability of 0.9^2000).
      assertThat(max[step]).as("largest pause of step %d", step).isGreaterThan(c - c / 10);
      assertThat(min[step]).as("smallest pause of step %d", step).isLessThan(c / 2 + c / 10);
    }
  }

  @Test
  void afterTheCapEveryPauseStaysCapped() {
    RetryBackoff backoff = new RetryBackoff();
    for (int i = 0; i < 10_000; i++) {
      long pause = backoff.nextNanos();
      if (i >= 7) {
        assertThat(pause).isBetween(RetryBackoff.CAP_NANOS / 2, RetryBackoff.CAP_NANOS);
      }
    }
  }

  @Test
  void eachBackoffHasItsOwnCeiling() {
    RetryBackoff first = new RetryBackoff();
    for (int i = 0; i < 20; i++) {
      first.nextNanos();
    }
    RetryBackoff fresh = new RetryBackoff();
    assertThat(fresh.nextNanos()).isBetween(ceiling(0) / 2, ceiling(0));
  }
}
