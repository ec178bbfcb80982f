package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.lettuce.core.event.connection.ConnectedEvent;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * A client on the application's Lettuce resources: its connections run on them, closing it leaves
 * them open for their owner, and the backend properties of {@code LockClients.connect} apply to
 * such settings as they do to a URI.
 */
class RedisSharedResourcesTest {
  private final String uri =
      RedisTestServers.externalUri().orElseGet(() -> RedisTestServers.embedded().uri());

  @Test
  void connectionsRunOnTheSharedResourcesWhichOutliveTheClient() throws Exception {
    ClientResources resources = DefaultClientResources.create();
    List<ConnectedEvent> connected = new CopyOnWriteArrayList<>();
    Disposable subscription =
        resources
            .eventBus()
            .get()
            .filter(ConnectedEvent.class::isInstance)
            .cast(ConnectedEvent.class)
            .subscribe(connected::add);
    try {
      RedisLockSettings settings =
          RedisLockSettings.of(uri)
              .withKeyPrefix("shared-" + UUID.randomUUID() + ":")
              .withClientResources(resources);
      String name = "shared-" + UUID.randomUUID();
      try (LockClient first = RedisLocks.newClient(settings, LockClientOptions.defaults())) {
        // The command and the signal connection, both on the shared event loops (the bus
        // publishes on its own thread, hence the wait).
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(connected).hasSize(2));
        try (Lease lease = first.lock(name).acquire(Duration.ofSeconds(5))) {
          assertThat(lease.isValid()).isTrue();
        }
      }
      assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();

      // A second client on the same resources, after the first closed: they are still usable.
      try (LockClient second = RedisLocks.newClient(settings, LockClientOptions.defaults())) {
        try (Lease lease = second.lock(name).acquire(Duration.ofSeconds(5))) {
          assertThat(lease.fencingToken()).isPositive();
        }
      }
    } finally {
      subscription.dispose();
      resources.shutdown().get();
    }
  }

  @Test
  void backendPropertiesApplyToSettings() {
    RedisLockSettings settings =
        RedisLockSettings.of(uri)
            .withProperties(Map.of("keyPrefix", "p:", "commandTimeout", "PT2S"));
    assertThat(settings.keyPrefix()).isEqualTo("p:");
    assertThat(settings.commandTimeout()).isEqualTo(Duration.ofSeconds(2));

    assertThatThrownBy(
            () -> RedisLockSettings.of(uri).withProperties(Map.of("commandTimeout", "2 seconds")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("commandTimeout");
  }
}
