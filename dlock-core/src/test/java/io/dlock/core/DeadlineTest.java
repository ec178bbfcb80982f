package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Deadline} on a fake clock: subtraction semantics, saturation, and the wrap of nanoTime.
 */
class DeadlineTest {

  private static final long SECOND = 1_000_000_000L;

  @Test
  void remainingCountsDownWithTheClock_andPassesExactlyAtTheDeadline() {
    FakeClock clock = new FakeClock(123_456_789L);
    Deadline deadline = Deadline.after(clock, Duration.ofSeconds(5));

    assertThat(deadline.remainingNanos()).isEqualTo(5 * SECOND);
    assertThat(deadline.passed()).isFalse();

    clock.advance(Duration.ofSeconds(2));
    assertThat(deadline.remainingNanos()).isEqualTo(3 * SECOND);

    clock.advanceNanos(3 * SECOND - 1);
    assertThat(deadline.remainingNanos()).isEqualTo(1);
    assertThat(deadline.passed()).isFalse();

    clock.advanceNanos(1);
    assertThat(deadline.remainingNanos()).isZero();
    assertThat(deadline.passed()).as("a deadline has passed when nothing remains").isTrue();

    clock.advance(Duration.ofMillis(7));
    assertThat(deadline.remainingNanos()).isEqualTo(-7_000_000L);
    assertThat(deadline.passed()).isTrue();
  }

  @Test
  void aZeroWaitHasPassedAtOnce() {
    FakeClock clock = new FakeClock(42);
    Deadline deadline = Deadline.after(clock, Duration.ZERO);
    assertThat(deadline.remainingNanos()).isZero();
    assertThat(deadline.passed()).isTrue();
  }

  /** nanoTime may be anywhere in the long range: a deadline across its wrap is still ahead. */
  @Test
  void aDeadlineAcrossTheWrapOfTheClockIsStillAheadAndCountsDownAcrossIt() {
    FakeClock clock = new FakeClock(Long.MAX_VALUE - SECOND);
    Deadline deadline = Deadline.after(clock, Duration.ofSeconds(5));

    assertThat(deadline.remainingNanos()).isEqualTo(5 * SECOND);
    assertThat(deadline.passed()).isFalse();

    clock.advance(Duration.ofSeconds(2)); // the clock itself wraps to negative values here
    assertThat(clock.peek()).isNegative();
    assertThat(deadline.remainingNanos()).isEqualTo(3 * SECOND);
    assertThat(deadline.passed()).isFalse();

    clock.advance(Duration.ofSeconds(3));
    assertThat(deadline.passed()).isTrue();
    assertThat(deadline.remainingNanos()).isZero();
  }

  @Test
  void aDeadlineFromTheMostNegativeClockValueWorksLikeAnyOther() {
    FakeClock clock = new FakeClock(Long.MIN_VALUE);
    Deadline deadline = Deadline.after(clock, Duration.ofMillis(10));
    assertThat(deadline.remainingNanos()).isEqualTo(10_000_000L);
    clock.advance(Duration.ofMillis(10));
    assertThat(deadline.passed()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(longs = {0, 1, Long.MAX_VALUE - 1, Long.MAX_VALUE, Long.MIN_VALUE, -1})
  void anUnboundedWaitIsFarAheadFromAnyClockValue_neverNegative(long start) {
    FakeClock clock = new FakeClock(start);
    Deadline forever = Deadline.after(clock, ChronoUnit.FOREVER.getDuration());

    assertThat(forever.remainingNanos()).isEqualTo(Deadline.MAX_NANOS);
    assertThat(forever.passed()).isFalse();

    // Even after a very long time, it is still ahead and counting down, not wrapped around.
    clock.advanceNanos(Deadline.MAX_NANOS / 2);
    assertThat(forever.remainingNanos()).isEqualTo(Deadline.MAX_NANOS - Deadline.MAX_NANOS / 2);
    assertThat(forever.passed()).isFalse();
  }

  @Test
  void toNanosSaturatesLongWaitsWithoutOverflow() {
    assertThat(Deadline.toNanosSaturated(Duration.ZERO)).isZero();
    assertThat(Deadline.toNanosSaturated(Duration.ofMillis(1500))).isEqualTo(1_500_000_000L);
    assertThat(Deadline.toNanosSaturated(Duration.ofNanos(Deadline.MAX_NANOS - 1)))
        .isEqualTo(Deadline.MAX_NANOS - 1);
    assertThat(Deadline.toNanosSaturated(Duration.ofNanos(Deadline.MAX_NANOS)))
        .isEqualTo(Deadline.MAX_NANOS);
    // Duration.toNanos() would throw ArithmeticException for these.
    assertThat(Deadline.toNanosSaturated(Duration.ofDays(365L * 1000)))
        .isEqualTo(Deadline.MAX_NANOS);
    assertThat(Deadline.toNanosSaturated(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)))
        .isEqualTo(Deadline.MAX_NANOS);
  }

  @Test
  void theSaturationLeavesRoomForAnyClockValuePlusTheWait() {
    // MAX_NANOS is a quarter of the range: now + MAX_NANOS and its difference to now never overflow
    // into a value of the wrong sign when compared by subtraction.
    assertThat(Deadline.MAX_NANOS).isEqualTo(Long.MAX_VALUE / 4);
    assertThat(Duration.ofNanos(Deadline.MAX_NANOS).toDays() / 365).isEqualTo(73);
  }
}
