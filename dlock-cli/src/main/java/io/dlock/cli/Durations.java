package io.dlock.cli;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Durations as people type them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, or a bare
 * number of seconds ({@code 5}, {@code 0.5}) as {@code flock -w} takes them.
 */
final class Durations implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern FORM = Pattern.compile("(\\d+)(ms|s|m|h)");
  private static final Pattern SECONDS = Pattern.compile("\\d+(\\.\\d+)?");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  static Duration parse(String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    try {
      if (SECONDS.matcher(text).matches()) {
        // Rounded up to whole milliseconds, so that no positive number becomes zero (one attempt).
        return Duration.ofMillis(
            new BigDecimal(text)
                .movePointRight(3)
                .setScale(0, RoundingMode.CEILING)
                .longValueExact());
      }
      Matcher m = FORM.matcher(text);
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        };
      }
    } catch (ArithmeticException | NumberFormatException tooLarge) {
      throw new CommandLine.TypeConversionException("'" + value + "' is too long a duration");
    }
    throw new CommandLine.TypeConversionException(
        "'"
            + value
            + "' is not a duration: use a number of seconds (5, 0.5) or a whole number with ms,"
            + " s, m or h (500ms, 30s, 5m)");
  }

  /** The short form back: {@code 1500ms}, {@code 30s}, {@code 5m}. */
  static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 3_600_000 == 0 && ms > 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0 && ms > 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
