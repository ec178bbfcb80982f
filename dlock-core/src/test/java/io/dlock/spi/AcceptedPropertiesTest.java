package io.dlock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AcceptedPropertiesTest {
  private final AcceptedProperties redis =
      new AcceptedProperties("Redis", List.of("keyPrefix", "username", "password"), " (a note)");

  @Test
  void aKeyItReadsPasses() {
    assertThatCode(() -> redis.check(Set.of("keyPrefix", "password"))).doesNotThrowAnyException();
  }

  @Test
  void aMisspeltKeyIsRefusedNamingTheClosestAndEveryKey() {
    assertThatThrownBy(() -> redis.check(Set.of("keyprefx")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "property 'keyprefx' is not read by the Redis backend; did you mean keyPrefix? It"
                + " reads: keyPrefix, username, password (a note)");
  }

  @Test
  void aKeyInAnotherSpellingIsRefusedAsGivenButFoundBySpelledAs() {
    assertThatThrownBy(() -> redis.check(Set.of("key-prefix")))
        .hasMessageContaining("did you mean keyPrefix?");
    assertThat(redis.spelledAs("KEY_PREFIX")).isEqualTo("keyPrefix");
    assertThat(redis.spelledAs("key-prefix")).isEqualTo("keyPrefix");
    assertThat(redis.spelledAs("prefix")).isNull();
  }

  @Test
  void closestIsASlipOrAContainedNameElseNothing() {
    assertThat(AcceptedProperties.closest("user", Set.of("username", "table")))
        .isEqualTo("username");
    assertThat(AcceptedProperties.closest("tabel", Set.of("username", "table"))).isEqualTo("table");
    assertThat(AcceptedProperties.closest("colour", Set.of("username", "table"))).isNull();
    assertThat(AcceptedProperties.closest("ab", Set.of("username", "table"))).isNull();
  }

  @Test
  void aRefusalShowsNamesTheCallersWay() {
    assertThat(redis.refusal("dlock.backend-properties.keyprefx", "keyprefx", n -> "<" + n + ">"))
        .isEqualTo(
            "dlock.backend-properties.keyprefx is not read by the Redis backend; did you mean"
                + " <keyPrefix>? It reads: <keyPrefix>, <username>, <password> (a note)");
  }
}
