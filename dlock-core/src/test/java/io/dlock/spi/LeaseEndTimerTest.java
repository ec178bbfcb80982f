package io.dlock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The lease ends that backends keep for session-bound holds: one timer, earliest first. */
class LeaseEndTimerTest {
  private static final long MS = 1_000_000L;

  private final ScheduledExecutorService thread = DriverThreads.timer("lease-end-test");
  private final List<String> due = new CopyOnWriteArrayList<>();
  private final LeaseEndTimer<String> timer = new LeaseEndTimer<>(thread, due::add);

  @AfterEach
  void stop() {
    thread.shutdownNow();
  }

  @Test
  void holdsComeDueInTheOrderOfTheirEndsWhateverTheOrderOfRegistration() {
    // A clock far below zero: the timer compares ends relative to its origin, never as raw values.
    MonotonicClock offset = () -> System.nanoTime() - Long.MAX_VALUE / 2;
    timer.useClock(offset);
    long now = timer.now();
    String late = new String("late");
    String early = new String("early");
    String middle = new String("middle");
    timer.register(late, now + 300 * MS);
    timer.register(early, now + 100 * MS);
    timer.register(middle, now + 200 * MS);
    await().atMost(Duration.ofSeconds(5)).until(() -> due.size() == 3);
    assertThat(due).containsExactly("early", "middle", "late");
    assertThat(timer.isRegistered(early)).isFalse();
  }

  @Test
  void registeringAgainReplacesTheEarlierEndAndUnregisteringDropsIt() throws Exception {
    long now = timer.now();
    String moved = new String("moved");
    String dropped = new String("dropped");
    String marker = new String("marker");
    timer.register(moved, now + 50 * MS);
    timer.register(moved, now + 250 * MS); // an extension registered again
    timer.register(dropped, now + 50 * MS);
    timer.unregister(dropped);
    timer.register(marker, now + 150 * MS);
    assertThat(timer.isRegistered(moved)).isTrue();
    assertThat(timer.isRegistered(dropped)).isFalse();
    await().atMost(Duration.ofSeconds(5)).until(() -> due.contains("moved"));
    // Ends come due in the order of their times: had the replaced end (50 ms) come due, "moved"
    // would precede "marker" (150 ms); the dropped end never comes. Checked in order rather than
    // at a moment between 150 and 250 ms, which a loaded machine may overshoot.
    assertThat(due).containsExactly("marker", "moved");
  }

  @Test
  void holdsAreToldApartByIdentityNotEquality() {
    long now = timer.now();
    String first = new String("same");
    String second = new String("same");
    timer.register(first, now + 20 * MS);
    timer.register(second, now + 20 * MS);
    await().atMost(Duration.ofSeconds(5)).until(() -> due.size() == 2);
  }

  @Test
  void anEndAlreadyPastComesDueAtOnceAndTheClockIsSetOnlyOnce() throws Exception {
    timer.useClock(MonotonicClock.SYSTEM);
    assertThatThrownBy(() -> timer.useClock(MonotonicClock.SYSTEM))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("one client");
    timer.register("past", timer.now() - 1_000 * MS);
    await().atMost(Duration.ofSeconds(5)).until(() -> due.contains("past"));
    thread.shutdown();
    assertThat(thread.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    timer.register("after close", timer.now()); // refused by the stopped thread: no error
  }
}
