package io.dlock.testkit;

import java.time.Duration;

/**
 * Every timeout and tolerance of the test suites goes through here and is multiplied by one factor,
 * the system property {@code dlock.test.timeScale} (default 1.0), so a slow machine is given more
 * time by one setting instead of flaking.
 */
public final class TestTiming {
  private static final double SCALE = parseScale();

  private TestTiming() {}

  /** The factor every timeout is multiplied by. */
  public static double scale() {
    return SCALE;
  }

  /** {@code base} multiplied by the scale factor. */
  public static Duration scaled(Duration base) {
    return Duration.ofNanos((long) (base.toNanos() * SCALE));
  }

  /** {@code millis} multiplied by the scale factor. */
  public static Duration millis(long millis) {
    return scaled(Duration.ofMillis(millis));
  }

  private static double parseScale() {
    String value = System.getProperty("dlock.test.timeScale", "1.0");
    try {
      double scale = Double.parseDouble(value);
      if (scale < 0.1 || scale > 100) {
        throw new IllegalArgumentException(
            "dlock.test.timeScale must be from 0.1 to 100, but was " + value);
      }
      return scale;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "dlock.test.timeScale must be a number from 0.1 to 100, but was '" + value + "'", e);
    }
  }
}
