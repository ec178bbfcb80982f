package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.testkit.server.RedisServerProcess;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Issue 14, item 8: {@code redlock://} URIs work through {@link LockClients}, as documented. */
class RedlockUriTest {
  private static List<RedisServerProcess> masters;

  @BeforeAll
  static void start() {
    masters = RedlockLockContractTest.startMasters(3);
  }

  @AfterAll
  static void stop() {
    masters.forEach(RedisServerProcess::close);
  }

  private static String uri() {
    return "redlock://"
        + masters.stream().map(m -> "127.0.0.1:" + m.port()).collect(Collectors.joining(","));
  }

  @Test
  void aRedlockUriConnectsThroughLockClientsWithItsProperties() {
    String name = "uri-" + UUID.randomUUID();
    try (LockClient client =
            LockClients.connect(
                uri(),
                Map.of("keyPrefix", "app:", "nodeTimeout", "PT0.2S"),
                LockClientOptions.defaults());
        LockClient other = LockClients.connect(uri())) {
      Lease lease = client.lock(name).tryAcquire().orElseThrow();
      for (RedisServerProcess master : masters) {
        assertThat(master.command("EXISTS", "app:{" + name + "}"))
            .as("held on every master under the configured prefix")
            .startsWith(":1");
      }
      assertThat(client.inspect(name)).hasSize(1);
      assertThat(lease.release()).isTrue();
      assertThat(other.lock(name).tryAcquire())
          .as("the default prefix is another lock")
          .isPresent();
    }
  }

  @Test
  void theUriQueryTakesTheNodeTimeoutAndKeyPrefixAndNamesAnUnknownParameter() {
    RedlockSettings settings = RedlockSettings.parse(uri() + "?nodeTimeout=PT0.3S&keyPrefix=q:");
    assertThat(settings.nodeTimeout()).isEqualTo(java.time.Duration.ofMillis(300));
    assertThat(settings.keyPrefix()).isEqualTo("q:");
    assertThat(settings.uris()).hasSize(3).allMatch(u -> u.startsWith("redis://127.0.0.1:"));
    assertThatThrownBy(() -> RedlockSettings.parse(uri() + "?timeout=PT1S"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'timeout'");
    assertThatThrownBy(() -> RedlockSettings.parse(uri() + "?nodeTimeout=1s"))
        .hasMessageContaining("nodeTimeout");
  }

  @Test
  void aBadRedlockPropertyIsNamed() {
    assertThatThrownBy(
            () ->
                LockClients.connect(
                    uri(), Map.of("nodeTimeout", "PT1M"), LockClientOptions.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nodeTimeout");
  }
}
