package io.dlock.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.redis.RedisBackendProvider;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code dlock.backend-properties} as Spring users write them, in each backend's spelling. */
class BackendPropertyNamesTest {

  @Test
  void springSpellingsReachTheBackendInItsOwn() {
    assertThat(
            BackendPropertyNames.forUri(
                "redis://127.0.0.1:6379",
                Map.of("key-prefix", "app2:", "command_timeout", "PT2S", "PASSWORD", "s")))
        .containsOnly(
            Map.entry("keyPrefix", "app2:"),
            Map.entry("commandTimeout", "PT2S"),
            Map.entry("password", "s"));
    // An environment variable (DLOCK_BACKENDPROPERTIES_KEYPREFIX) arrives lower case.
    assertThat(BackendPropertyNames.forUri("rediss://h:6380", Map.of("keyprefix", "x:")))
        .containsOnly(Map.entry("keyPrefix", "x:"));
    assertThat(
            BackendPropertyNames.forUri(
                "zk://h:2181/r", Map.of("owner-ids-shared-across-clients", "true")))
        .containsOnly(Map.entry("ownerIdsSharedAcrossClients", "true"));
    assertThat(BackendPropertyNames.forUri("jdbc:h2:mem:x", Map.of("create-schema", "true")))
        .containsOnly(Map.entry("createSchema", "true"));
    assertThat(BackendPropertyNames.forUri("redlock://a:1,b:2,c:3", Map.of("node-timeout", "PT1S")))
        .containsOnly(Map.entry("nodeTimeout", "PT1S"));
  }

  @Test
  void aKeyTheBackendDoesNotReadIsRefusedNamingTheClosest() {
    assertThatThrownBy(
            () -> BackendPropertyNames.forUri("redis://h:6379", Map.of("kye-prefix", "app2:")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(
            "dlock.backend-properties.kye-prefix is not read by the Redis backend")
        .hasMessageContaining("did you mean key-prefix (keyPrefix)?");
    // A key of another backend: Redis has no mode.
    assertThatThrownBy(() -> BackendPropertyNames.forUri("redis://h:6379", Map.of("mode", "row")))
        .hasMessageContaining("dlock.backend-properties.mode is not read by the Redis backend");
    assertThatThrownBy(() -> BackendPropertyNames.forUri("jdbc:h2:mem:x", Map.of("user", "sa")))
        .hasMessageContaining("did you mean username?");
  }

  @Test
  void twoSpellingsOfOneKeyAreRefused() {
    Map<String, String> both = new LinkedHashMap<>();
    both.put("keyPrefix", "a:");
    both.put("key-prefix", "b:");
    assertThatThrownBy(
            () ->
                BackendPropertyNames.forBackend(
                    new RedisBackendProvider().acceptedProperties("redis://"), both))
        .hasMessageContaining(
            "dlock.backend-properties.keyPrefix and dlock.backend-properties.key-prefix are the"
                + " same setting");
  }

  @Test
  void aBackendOfTheApplicationsOwnGetsItsPropertiesAsWritten() {
    Map<String, String> given = Map.of("any-thing", "1");
    assertThat(BackendPropertyNames.forUri("custom://h", given)).isEqualTo(given);
  }

  @Test
  void aClientOverABeanRefusesBackendProperties() {
    BackendPropertyNames.requireNone(Map.of(), "DataSource", "dlock.jdbc.*");
    assertThatThrownBy(
            () ->
                BackendPropertyNames.requireNone(
                    Map.of("password", "secret-value"), "DataSource", "dlock.jdbc.*"))
        .hasMessageContaining("dlock.backend-properties (password) is not read by a client built")
        .hasMessageNotContaining("secret-value");
  }
}
