package io.dlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.torture.Event.Kind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The next-grant bound of a run: under {@code delay} it counts the target's round trips beyond the
 * first, each stretched by the delay there and back; elsewhere, and for one-command targets, it is
 * the target's own. Lease 2 s: base bound 3,666 ms, delay 200 ms each way.
 */
class RunBoundTest {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final long MS = 1_000_000L;
  private static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

  private static long boundMillis(Target target, Scenario scenario) {
    return Target.runBound(target, LEASE, scenario).toMillis();
  }

  @Test
  void oneCommandTargetsKeepTheirBoundUnderDelay() {
    Target redis = ExternalTarget.redis("redis://127.0.0.1:6379");
    assertThat(boundMillis(redis, Scenario.DELAY)).isEqualTo(3_666);
    Target session = ExternalTarget.mysql(MARIADB, "session");
    assertThat(boundMillis(session, Scenario.DELAY))
        .isEqualTo(session.nextGrantBound(LEASE).toMillis());
  }

  @Test
  void leaseRowsUnderDelayCountTheirRoundTrips() {
    // MySQL dialect: 4 to a refusal, 6 to a grant: 8 beyond the first of each, 400 ms each.
    assertThat(boundMillis(ExternalTarget.mysql(MARIADB, "lease-row"), Scenario.DELAY))
        .isEqualTo(3_666 + 8 * 400);
    // MariaDB's: 3 and 4: 5 beyond.
    assertThat(boundMillis(ExternalTarget.mariadb(MARIADB, "lease-row"), Scenario.DELAY))
        .isEqualTo(3_666 + 5 * 400);
  }

  @Test
  void roundTripsCountOnlyUnderDelay() {
    Target mysql = ExternalTarget.mysql(MARIADB, "lease-row");
    for (Scenario s : Scenario.SOAK) {
      if (s != Scenario.DELAY) {
        assertThat(boundMillis(mysql, s)).as(s.id()).isEqualTo(3_666);
      }
    }
  }

  @Test
  void anAttemptTakesAtLeastOneRoundTrip() {
    assertThatThrownBy(() -> new Target.RoundTrips(0, 6))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1");
  }

  /**
   * The gap the first run of the MySQL dialect under delay saw, and one a stuck lock would leave.
   */
  @Test
  void theCheckerJudgesAFreeGapUnderDelayByTheRunBound() {
    Target mysql = ExternalTarget.mysql(MARIADB, "lease-row");
    Target redis = ExternalTarget.redis("redis://127.0.0.1:6379");
    assertThat(stuckFailures(4_087, Target.runBound(redis, LEASE, Scenario.DELAY))).hasSize(1);
    assertThat(stuckFailures(4_087, Target.runBound(mysql, LEASE, Scenario.DELAY))).isEmpty();
    assertThat(stuckFailures(7_000, Target.runBound(mysql, LEASE, Scenario.DELAY)))
        .singleElement()
        .satisfies(f -> assertThat(f).contains("a was free for 7000 ms", "bound of 6866 ms"));
  }

  /**
   * The stuck-lock failures of a delay run where lock "a" is free for {@code freeMs} while waited.
   */
  private static List<String> stuckFailures(long freeMs, Duration bound) {
    List<Event> history = new ArrayList<>();
    long t = 1_000;
    history.add(new Event(0, "faults", Kind.RUN_BEGIN, "-", 0, "delay"));
    history.add(new Event(t * MS, "w1", Kind.GRANT, "a", 1, ""));
    history.add(new Event((t + 10) * MS, "w2", Kind.ACQUIRING, "a", 0, ""));
    history.add(new Event((t + 100) * MS, "w1", Kind.RELEASING, "a", 1, ""));
    history.add(new Event((t + 500) * MS, "w1", Kind.RELEASED, "a", 1, "true"));
    long granted = t + 100 + freeMs;
    history.add(new Event(granted * MS, "w2", Kind.GRANT, "a", 2, ""));
    history.add(new Event((granted + 100) * MS, "w2", Kind.RELEASING, "a", 2, ""));
    history.add(new Event((granted + 101) * MS, "w2", Kind.RELEASED, "a", 2, "true"));
    for (int i = 0; i < 5; i++) {
      long from = 20_000 + i * 10L;
      history.add(new Event(from * MS, "w9", Kind.GRANT, "filler", 10 + i, ""));
      history.add(new Event((from + 5) * MS, "w9", Kind.RELEASING, "filler", 10 + i, ""));
      history.add(new Event((from + 6) * MS, "w9", Kind.RELEASED, "filler", 10 + i, "true"));
    }
    history.add(new Event(30_000 * MS, "faults", Kind.RUN_END, "-", 0, "delay"));
    history.sort(Comparator.comparingLong(Event::nanos));
    RunSettings settings =
        new RunSettings(
            "test", Scenario.DELAY, Duration.ofSeconds(30), 4, 2, LEASE, Path.of("."), false);
    return new Checker(settings, bound, history)
        .check("test", 1).failures().stream()
            .filter(f -> f.contains("while a worker waited"))
            .toList();
  }
}
