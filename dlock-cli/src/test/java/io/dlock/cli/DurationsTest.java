package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.testkit.TestTiming;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Durations on the command line: a unit, or a bare number of seconds as flock -w reads it. */
class DurationsTest {

  @Test
  void aBareNumberIsSeconds() {
    assertThat(Durations.parse("5")).isEqualTo(Duration.ofSeconds(5));
    assertThat(Durations.parse("0.5")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("0.0001"))
        .as("never rounded to zero")
        .isEqualTo(Duration.ofMillis(1));
    assertThat(Durations.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("5m")).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void badDurationsAreRefusedNamingTheOptionAndTheForms() {
    assertThatThrownBy(() -> Durations.parse("5x"))
        .isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessageContaining("number of seconds (5, 0.5)");
    assertThatThrownBy(() -> Durations.parse("99999999999999999999h"))
        .isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessageContaining("too long");
    Cli.Result tooLong =
        new InProcessCli()
            .run(
                TestTiming.millis(60_000),
                "run",
                "--backend",
                "redis://127.0.0.1:1",
                "--name",
                "x",
                "--wait",
                "9000h",
                "--",
                "true");
    assertThat(tooLong.exit()).as(tooLong.toString()).isEqualTo(ExitCodes.USAGE);
    assertThat(tooLong.err()).contains("--wait must be from 0 to 8760h").contains("9000h");
  }
}
