package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.testkit.server.RedisClusterProcess;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Redis Cluster with one of its three masters stopped: calls to the slots of the others still
 * work, even after a live node lost its script cache, and the client closes in bounded time (issue
 * 29). One cluster for both, its third node stopped before the tests.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisClusterNodeDownTest {
  private static final RedisKeys KEYS = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX);
  private static RedisClusterProcess cluster;

  @BeforeAll
  static void startClusterAndStopANode() {
    cluster = RedisClusterProcess.start(3);
    for (RedisServerProcess node : cluster.nodes()) {
      // The live nodes keep serving their slots when they see the stopped one fail (the helper
      // forms the cluster with full coverage required, which would refuse every command then).
      node.command("CONFIG", "SET", "cluster-require-full-coverage", "no");
    }
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  private static RedisLockBackend connect() {
    return RedisLockBackend.connect(
        RedisLockSettings.of(cluster.uri()).withCommandTimeout(Duration.ofSeconds(2)));
  }

  /** A lock name whose key is in the slots of the first node (slots 0 to 5460). */
  private static String nameOnTheFirstNode() {
    while (true) {
      String name = "down-" + UUID.randomUUID();
      if (SlotHash.getSlot(KEYS.lock(name)) < 16384 / 3) {
        return name;
      }
    }
  }

  @Test
  void aLiveNodeThatLostItsScriptsIsCalledWhileAnotherNodeIsDown() throws Exception {
    try (RedisLockBackend backend = connect()) {
      cluster.nodes().get(2).kill();
      RedisServerProcess live = cluster.nodes().get(0);
      assertThat(live.command("SCRIPT", "FLUSH")).startsWith("+OK");

      AcquireResult result =
          backend
              .tryAcquire(
                  nameOnTheFirstNode(), LockOwner.ofGrant("a".repeat(32)), Duration.ofSeconds(5))
              .get(5, TimeUnit.SECONDS);

      assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    }
  }
}
