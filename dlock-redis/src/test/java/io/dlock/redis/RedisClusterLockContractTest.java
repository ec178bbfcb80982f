package io.dlock.redis;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.spi.LockBackend;
import io.dlock.testkit.LockContractTest;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisClusterProcess;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The contract suite against a 3-master Redis Cluster that the test forms on loopback ports, and
 * last, on the same cluster, what happens when one of its nodes stops ({@link
 * RedisClusterNodeDown}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisClusterLockContractTest extends LockContractTest {
  private static RedisClusterProcess cluster;

  @BeforeAll
  static void startCluster() {
    cluster = RedisClusterProcess.start(3);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @Override
  protected LockBackend newBackend() {
    return RedisLockBackend.connect(RedisLockSettings.of(cluster.uri()));
  }

  /**
   * A longer operation timeout than the kit's 2 s: a new Cluster client's first call waits for the
   * topology of every node, which on two busy cores (another test JVM beside this one) took longer
   * than 2 s. The tests of a stopped or unreachable server make clients of their own.
   */
  @Override
  protected LockClient newClient() {
    return newClient(LockClientOptions.defaults().withOperationTimeout(TestTiming.millis(5_000)));
  }

  @Override
  protected LockBackend newBackendForUnreachableServer() {
    return RedisLockBackend.connect(
        RedisLockSettings.of("redis-cluster://127.0.0.1:" + RedisServerProcess.freePort())
            .withCommandTimeout(Duration.ofSeconds(1)));
  }

  /** A renewal never shortens another client's hold of a shared owner id (issue 29). */
  @Test
  void aLateShortRenewalLeavesTheLongHoldOfASharedOwnerIdItsLease() throws Exception {
    try (LockBackend a = newBackend();
        LockBackend b = newBackend()) {
      RedisSharedOwnerLeaseTest.aLateShortRenewalLeavesTheLongHoldItsLease(
          a,
          b,
          "shared-owner-" + UUID.randomUUID(),
          key ->
              cluster.nodes().stream()
                  .map(node -> node.command("PTTL", key))
                  .filter(reply -> reply.startsWith(":")) // the others answer MOVED
                  .mapToLong(reply -> Long.parseLong(reply.trim().substring(1)))
                  .min()
                  .orElseThrow());
    }
  }

  /** Last but one: stops the cluster's third node (issue 29, NOSCRIPT with a node down). */
  @Test
  @Order(Integer.MAX_VALUE - 1)
  void aLiveNodeThatLostItsScriptsIsCalledWhileAnotherNodeIsDown() throws Exception {
    new RedisClusterNodeDown(cluster).aLiveNodeThatLostItsScriptsIsCalledWhileAnotherNodeIsDown();
  }

  /** Last: the third node stopped (issue 29, close in bounded time). */
  @Test
  @Order(Integer.MAX_VALUE)
  void theClientClosesInBoundedTimeAfterANodeStopped() throws Exception {
    new RedisClusterNodeDown(cluster).theClientClosesInBoundedTimeAfterANodeStopped();
  }

  @Override
  protected void deleteLockOnServer(String name) {
    RedisClusterClient client =
        RedisClusterClient.create(
            cluster.uri().replace("redis-cluster://", "redis://").split(",")[0]);
    try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
      connection.sync().del(new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX).lock(name));
    } finally {
      client.shutdown();
    }
  }
}
