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

/**
 * A Redis Cluster with one of its three masters stopped: calls to the slots of the others still
 * work, even after a live node lost its script cache, and the client closes in bounded time (issue
 * 29). Run last by {@link RedisClusterLockContractTest} on its cluster (no cluster of their own):
 * they stop its third node.
 */
final class RedisClusterNodeDown {
  private static final RedisKeys KEYS = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX);
  private final RedisClusterProcess cluster;

  RedisClusterNodeDown(RedisClusterProcess cluster) {
    this.cluster = cluster;
    for (RedisServerProcess node : cluster.nodes()) {
      if (node.isRunning()) {
        // The live nodes keep serving their slots when they see the stopped one fail (the helper
        // forms the cluster with full coverage required, which would refuse every command then).
        node.command("CONFIG", "SET", "cluster-require-full-coverage", "no");
      }
    }
  }

  private RedisLockBackend connect() {
    return RedisLockBackend.connect(
        RedisLockSettings.of(cluster.uri()).withCommandTimeout(Duration.ofSeconds(2)));
  }

  /** A lock name whose key is in the slots of node {@code node} (a third of them each). */
  private static String nameOnNode(int node) {
    while (true) {
      String name = "down-" + UUID.randomUUID();
      if (SlotHash.getSlot(KEYS.lock(name)) * 3 / 16384 == node) {
        return name;
      }
    }
  }

  private static java.util.concurrent.CompletableFuture<AcquireResult> acquireOnNode(
      RedisLockBackend backend, int node) {
    return backend.tryAcquire(
        nameOnNode(node),
        LockOwner.ofGrant(UUID.randomUUID().toString().replace("-", "")),
        Duration.ofSeconds(5));
  }

  void theClientClosesInBoundedTimeAfterANodeStopped() throws Exception {
    RedisLockBackend backend = connect();
    cluster.nodes().get(2).kill(); // if the first test has not already
    // A call to the stopped node's slots: Lettuce now reconnects to it, again and again.
    acquireOnNode(backend, 2).handle((result, error) -> error).get(10, TimeUnit.SECONDS);

    long start = System.nanoTime();
    RedisConnections.Closed closed = backend.close(Duration.ofSeconds(2));
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(closed).isEqualTo(RedisConnections.Closed.CLOSED);
    assertThat(tookMillis).isLessThan(2_500);
    assertThat(acquireOnNode(backend, 0))
        .as("a call after close")
        .failsWithin(Duration.ofSeconds(2));
  }

  /** Stops the third node, while the backend has a connection to it. */
  void aLiveNodeThatLostItsScriptsIsCalledWhileAnotherNodeIsDown() throws Exception {
    try (RedisLockBackend backend = connect()) {
      // A call to the third node first: the connection to it is open (and then dropped) when it
      // stops, as in a client that ran for a while, so the test is the same on every run.
      acquireOnNode(backend, 2).get(5, TimeUnit.SECONDS);
      cluster.nodes().get(2).kill();
      RedisServerProcess live = cluster.nodes().get(0);
      assertThat(live.command("SCRIPT", "FLUSH")).startsWith("+OK");

      AcquireResult result = acquireOnNode(backend, 0).get(5, TimeUnit.SECONDS);

      assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    }
  }
}
