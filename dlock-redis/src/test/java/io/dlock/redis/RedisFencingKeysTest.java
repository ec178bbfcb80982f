package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The keys dlock leaves in Redis are bounded: the locks held now plus the configured number of
 * fencing counters, however many lock names were used; and tokens still only grow for each name,
 * across expiries, deletions and an upgrade from the per-name counters of earlier versions.
 */
class RedisFencingKeysTest {
  private static final int COUNTERS = 256;
  private static final int NAMES = 100_000;

  private final String prefix = "fk-" + UUID.randomUUID() + ":";
  private RedisClient raw;
  private StatefulRedisConnection<String, String> connection;
  private RedisCommands<String, String> redis;
  private RedisLockBackend backend;

  @BeforeEach
  void connect() {
    String uri = RedisTestServers.externalUri().orElse(RedisTestServers.embedded().uri());
    raw = RedisClient.create(uri);
    connection = raw.connect();
    redis = connection.sync();
    backend =
        RedisLockBackend.connect(
            RedisLockSettings.of(uri)
                .withKeyPrefix(prefix)
                .withCommandTimeout(Duration.ofSeconds(1)) // request memory: 4 s
                .withFencingCounters(COUNTERS));
    backend.start(new BackendContext(MonotonicClock.SYSTEM, Duration.ofSeconds(5)));
  }

  @AfterEach
  void close() {
    backend.close();
    List<String> left = keys();
    if (!left.isEmpty()) {
      redis.del(left.toArray(new String[0]));
    }
    connection.close();
    raw.shutdown();
  }

  private List<String> keys() {
    List<String> keys = new ArrayList<>();
    ScanCursor cursor = ScanCursor.INITIAL;
    do {
      KeyScanCursor<String> page =
          redis.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(5000));
      keys.addAll(page.getKeys());
      cursor = page;
    } while (!cursor.isFinished());
    return keys;
  }

  private long grant(String name, LockOwner owner, Duration lease) throws Exception {
    AcquireResult result = backend.tryAcquire(name, owner, lease).get(5, TimeUnit.SECONDS);
    assertThat(result).as("granted %s", name).isInstanceOf(AcquireResult.Granted.class);
    return ((AcquireResult.Granted) result).fencingToken();
  }

  @Test
  void aHundredThousandNamesLeaveNoMoreKeysThanTheCountersAndTheLocksHeld() throws Exception {
    LockOwner owner = LockOwner.ofGrant("bounded");
    Duration lease = Duration.ofMinutes(1);
    List<String> held = List.of("kept-1", "kept-2", "kept-3");
    for (String name : held) {
      grant(name, owner, lease);
    }
    // Batches small enough to be answered within the command timeout on a shared, busy server.
    int batch = 250;
    for (int from = 0; from < NAMES; from += batch) {
      List<CompletableFuture<ReleaseResult>> cycles = new ArrayList<>(batch);
      for (int i = from; i < from + batch; i++) {
        String name = "order-" + i;
        cycles.add(
            backend
                .tryAcquire(name, owner, lease)
                .thenCompose(
                    r -> backend.release(name, owner, ((AcquireResult.Granted) r).fencingToken())));
      }
      for (CompletableFuture<ReleaseResult> cycle : cycles) {
        assertThat(cycle.get(30, TimeUnit.SECONDS)).isEqualTo(ReleaseResult.RELEASED);
      }
    }
    List<String> lasting = keys().stream().filter(k -> !k.contains(":r:")).toList();
    Set<String> counters = new HashSet<>();
    for (String key : lasting) {
      if (key.endsWith(":fences")) {
        counters.add(key);
      }
    }
    assertThat(counters).hasSizeLessThanOrEqualTo(COUNTERS);
    assertThat(lasting).hasSize(counters.size() + held.size());
    // The memory of each request (for replays after a reconnect) expires with its command timeout.
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> keys().size() <= COUNTERS + held.size());
    System.out.printf(
        "%,d lock names used, %d held: %d keys left under the prefix (%d fencing counters)%n",
        NAMES, held.size(), keys().size(), counters.size());
  }

  @Test
  void tokensOnlyGrowPerNameAcrossExpiryDeletionAndAnUpgradeFromPerNameCounters() throws Exception {
    String name = "upgraded";
    RedisKeys keys = new RedisKeys(prefix, COUNTERS);
    // An earlier version counted this name on its own key, up to 1000.
    redis.set(keys.legacyFence(name), "1000");
    LockOwner owner = LockOwner.ofGrant("upgrade");
    long first = grant(name, owner, Duration.ofSeconds(30));
    assertThat(first).as("past the per-name counter").isGreaterThan(1000);
    assertThat(redis.get(keys.legacyFence(name)))
        .as("kept current for clients of the earlier version")
        .isEqualTo(Long.toString(first));
    assertThat(backend.release(name, owner, first).get(5, TimeUnit.SECONDS))
        .isEqualTo(ReleaseResult.RELEASED);

    // A client of the earlier version grants the name meanwhile: the next token passes it too.
    redis.incrby(keys.legacyFence(name), 500);
    long afterOldClient = grant(name, owner, Duration.ofMillis(200));
    assertThat(afterOldClient).isGreaterThan(first + 500);

    // Expiry: the lease runs out on the server.
    await().atMost(Duration.ofSeconds(10)).until(() -> redis.exists(keys.lock(name)) == 0);
    long afterExpiry = grant(name, owner, Duration.ofSeconds(30));
    assertThat(afterExpiry).isGreaterThan(afterOldClient);

    // Deletion behind the holder's back (a forced release, a flush of the lock key).
    redis.del(keys.lock(name));
    long afterDeletion = grant(name, owner, Duration.ofSeconds(30));
    assertThat(afterDeletion).isGreaterThan(afterExpiry);

    // Other names on the same counter only push it further: this name's tokens still grow.
    for (int i = 0; i < 50; i++) {
      String other = "other-" + i;
      backend
          .release(other, owner, grant(other, owner, Duration.ofSeconds(30)))
          .get(5, TimeUnit.SECONDS);
    }
    redis.del(keys.lock(name));
    assertThat(grant(name, owner, Duration.ofSeconds(30))).isGreaterThan(afterDeletion);
    // A name never used before draws from a counter too; no per-name key is created for it.
    grant("fresh", owner, Duration.ofSeconds(30));
    assertThat(redis.exists(keys.legacyFence("fresh"))).isZero();
  }

  @Test
  void theNumberOfCountersIsAPowerOfTwoAndOnClusterOnePerSlot() {
    assertThatThrownBy(() -> RedisLockSettings.of("redis://localhost").withFencingCounters(3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fencingCounters")
        .hasMessageContaining("power of two");
    assertThatThrownBy(() -> RedisLockSettings.of("redis://localhost").withFencingCounters(0))
        .hasMessageContaining("fencingCounters");
    assertThatThrownBy(
            () -> RedisLockSettings.of("redis-cluster://localhost:7000").withFencingCounters(256))
        .hasMessageContaining("16384 on Redis Cluster");
    assertThat(RedisLockSettings.of("redis://localhost").fencingCounters()).isEqualTo(16384);
    // The same key, spelled the same, as a property of a URI (the CLI, the starter).
    RedisBackendProvider provider = new RedisBackendProvider();
    assertThatThrownBy(
            () ->
                provider.connect(
                    "redis://localhost",
                    java.util.Map.of("fencingCounters", "many"),
                    io.dlock.LockClientOptions.defaults()))
        .hasMessageContaining("fencingCounters must be a whole number from 1 to 16384");
    assertThatThrownBy(
            () ->
                provider.connect(
                    "redis://localhost",
                    java.util.Map.of("fencingCounters", "100"),
                    io.dlock.LockClientOptions.defaults()))
        .hasMessageContaining("power of two");
  }

  @Test
  void everyCounterKeyIsInTheSlotItsTagNames() {
    RedisKeys keys = new RedisKeys("p:", RedisKeys.SLOTS);
    for (int i = 0; i < 2_000; i++) {
      String name = "name-" + i;
      assertThat(io.lettuce.core.cluster.SlotHash.getSlot(keys.fenceCounter(name)))
          .as("counter of %s", name)
          .isEqualTo(io.lettuce.core.cluster.SlotHash.getSlot(keys.lock(name)));
    }
    assertThat(keys.fenceCounter("}starts-with-brace"))
        .satisfies(
            k ->
                assertThat(io.lettuce.core.cluster.SlotHash.getSlot(k))
                    .isEqualTo(
                        io.lettuce.core.cluster.SlotHash.getSlot(keys.lock("}starts-with-brace"))));
  }
}
