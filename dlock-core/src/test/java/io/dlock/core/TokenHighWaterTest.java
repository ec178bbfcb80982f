package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TokenHighWaterTest {

  @Test
  void aLowerTokenIsRefusedWhileAnAcquisitionOfTheNameIsInFlight() {
    TokenHighWater highWater = new TokenHighWater();
    highWater.enter("x");
    highWater.enter("x");
    assertThat(highWater.admit("x", 6)).isEqualTo(6);
    highWater.exit("x");
    assertThat(highWater.admit("x", 5)).as("stale: 6 was granted since").isEqualTo(6);
    assertThat(highWater.admit("x", 6)).as("the same grant, re-entered").isEqualTo(6);
    assertThat(highWater.admit("y", 1)).as("another name").isEqualTo(1);
  }

  @Test
  void theMarkIsDroppedWhenNoAcquisitionOfTheNameIsInFlight() {
    TokenHighWater highWater = new TokenHighWater();
    highWater.enter("x");
    highWater.admit("x", 6);
    highWater.exit("x");
    highWater.enter("x");
    // No acquisition was in flight in between, so nothing remembers 6: the map holds only names
    // being acquired. (Tokens only grow on the server: an answer to a later request is >= 6.)
    assertThat(highWater.admit("x", 5)).isEqualTo(5);
    highWater.exit("x");
  }
}
