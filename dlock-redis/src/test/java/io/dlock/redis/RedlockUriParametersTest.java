package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.LockClientOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The query of a {@code redlock://} URI and the Redis properties, read by {@link
 * io.dlock.spi.UriParameters}: no server needed.
 */
class RedlockUriParametersTest {
  private static final String MASTERS = "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";

  @Test
  void theQueryIsPercentDecodedAndAPlusStaysAPlus() {
    RedlockSettings settings =
        RedlockSettings.parse(MASTERS + "?keyPrefix=app:&nodeTimeout=PT%2B0.2S");
    assertThat(settings.keyPrefix()).isEqualTo("app:");
    assertThat(settings.nodeTimeout()).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void emptyParametersAreSkippedAndAnEmptyValueIsKept() {
    RedlockSettings settings = RedlockSettings.parse(MASTERS + "?&keyPrefix=&");
    assertThat(settings.keyPrefix()).isEmpty();
    assertThat(settings.nodeTimeout()).isEqualTo(Duration.ofMillis(50));
    assertThat(RedlockSettings.parse(MASTERS + "?").uris()).hasSize(3);
  }

  @Test
  void anUnknownRepeatedOrBadlyEscapedParameterIsNamed() {
    assertThatThrownBy(() -> RedlockSettings.parse(MASTERS + "?timeout=PT1S"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("redlock URI parameter 'timeout' is not known; known: nodeTimeout, keyPrefix");
    assertThatThrownBy(() -> RedlockSettings.parse(MASTERS + "?keyPrefix=a:&keyPrefix=b:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("redlock URI parameter 'keyPrefix' is given more than once");
    assertThatThrownBy(() -> RedlockSettings.parse(MASTERS + "?keyPrefix=100%"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'keyPrefix'");
  }

  @Test
  void aPercentEscapedKeyPrefixIsDecodedAsEveryParameterIs() {
    assertThat(RedlockSettings.parse(MASTERS + "?keyPrefix=app%3A").keyPrefix()).isEqualTo("app:");
    assertThat(RedlockSettings.parse(MASTERS + "?nodeTimeout=PT1S&keyPrefix=a%25").keyPrefix())
        .isEqualTo("a%");
  }

  @Test
  void aBadOrOutOfRangeNodeTimeoutIsNamedWithItsRange() {
    assertThatThrownBy(() -> RedlockSettings.parse(MASTERS + "?nodeTimeout=1s"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("nodeTimeout must be an ISO-8601 duration")
        .hasMessageContaining("'1s'");
    assertThatThrownBy(() -> RedlockSettings.parse(MASTERS + "?nodeTimeout=PT1M"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nodeTimeout must be from PT0.001S to PT10S, but was PT1M");
  }

  @Test
  void aMalformedDurationPropertyIsAnIllegalArgumentNamingIt() {
    RedisBackendProvider provider = new RedisBackendProvider();
    assertThatThrownBy(
            () ->
                provider.connect(
                    "redis://127.0.0.1:1",
                    Map.of("commandTimeout", "2s"),
                    LockClientOptions.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("commandTimeout")
        .hasMessageContaining("'2s'");
    assertThatThrownBy(
            () ->
                provider.connect(MASTERS, Map.of("nodeTimeout", "x"), LockClientOptions.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nodeTimeout");
  }

  @Test
  void settingsRangesAreNamed() {
    assertThatThrownBy(
            () -> RedisLockSettings.of("redis://h").withCommandTimeout(Duration.ofMillis(5)))
        .hasMessage("commandTimeout must be from PT0.01S to PT5M, but was PT0.005S");
    assertThatThrownBy(
            () ->
                RedisLockSettings.of("redis://h")
                    .withReplicaAcknowledgement(17, Duration.ofSeconds(1)))
        .hasMessage("replicas must be from 1 to 16, but was 17");
    assertThatThrownBy(() -> RedisLockSettings.of("redis://h").withCommandTimeout(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("commandTimeout");
  }
}
