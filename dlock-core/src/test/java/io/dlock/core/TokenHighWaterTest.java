package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TokenHighWaterTest {

  @Test
  void aLowerTokenAnsweringARequestSentBeforeAHigherGrantIsRefused() {
    TokenHighWater highWater = new TokenHighWater();
    highWater.enter("x");
    highWater.enter("x");
    long firstSent = highWater.position();
    long secondSent = highWater.position();
    assertThat(highWater.admit("x", 6, secondSent)).isEqualTo(6);
    highWater.exit("x");
    assertThat(highWater.admit("x", 5, firstSent)).as("sent before 6 was admitted").isEqualTo(6);
    assertThat(highWater.admit("x", 6, firstSent)).as("the same grant, re-entered").isEqualTo(6);
    assertThat(highWater.admit("y", 1, firstSent)).as("another name").isEqualTo(1);
    highWater.exit("x");
  }

  @Test
  void aLowerTokenAnsweringARequestSentAfterTheHigherGrantFollowsTheServersCounters() {
    TokenHighWater highWater = new TokenHighWater();
    highWater.enter("x");
    highWater.admit("x", 1000, highWater.position());
    // Sent after 1000 was admitted: the server's counters went back (found by review: refusing it
    // refused every grant of the name while any acquisition of it was in flight).
    long sentBeforeTwo = highWater.position();
    assertThat(highWater.admit("x", 1, sentBeforeTwo)).isEqualTo(1);
    assertThat(highWater.admit("x", 2, highWater.position())).isEqualTo(2);
    assertThat(highWater.admit("x", 1, sentBeforeTwo)).as("stale again, against 2").isEqualTo(2);
    highWater.exit("x");
  }

  @Test
  void theMarkIsDroppedWhenNoAcquisitionOfTheNameIsInFlight() {
    TokenHighWater highWater = new TokenHighWater();
    long sent = highWater.position();
    highWater.enter("x");
    highWater.admit("x", 6, sent);
    highWater.exit("x");
    highWater.enter("x");
    // No acquisition was in flight in between, so nothing remembers 6: the map holds only names
    // being acquired.
    assertThat(highWater.admit("x", 5, sent)).isEqualTo(5);
    highWater.exit("x");
  }
}
