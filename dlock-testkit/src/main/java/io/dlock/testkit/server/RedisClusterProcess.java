package io.dlock.testkit.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Cluster of {@code masters} real redis-server processes on free loopback ports, no
 * replicas, slots split evenly. Built with plain CLUSTER commands, so it needs no redis-cli.
 */
public final class RedisClusterProcess implements AutoCloseable {
  private static final int SLOTS = 16384;
  private final List<RedisServerProcess> nodes = new ArrayList<>();

  private RedisClusterProcess() {}

  public static RedisClusterProcess start(int masters) {
    if (masters < 1 || masters > 16) {
      throw new IllegalArgumentException("masters must be from 1 to 16, but was " + masters);
    }
    RedisClusterProcess cluster = new RedisClusterProcess();
    try {
      for (int i = 0; i < masters; i++) {
        cluster.nodes.add(
            RedisServerProcess.startClusterNode(
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "2000",
                "--cluster-require-full-coverage", "yes"));
      }
      for (int i = 0; i < masters; i++) {
        int from = i * SLOTS / masters;
        int to = (i + 1) * SLOTS / masters - 1;
        expectOk(cluster.nodes.get(i).command("CLUSTER", "ADDSLOTSRANGE", "" + from, "" + to));
      }
      RedisServerProcess first = cluster.nodes.get(0);
      for (int i = 1; i < masters; i++) {
        expectOk(first.command("CLUSTER", "MEET", "127.0.0.1", "" + cluster.nodes.get(i).port()));
      }
      cluster.awaitState("cluster_state:ok", "cluster_known_nodes:" + masters);
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...}. */
  public String uri() {
    StringBuilder uri = new StringBuilder("redis-cluster://");
    for (int i = 0; i < nodes.size(); i++) {
      uri.append(i == 0 ? "" : ",").append("127.0.0.1:").append(nodes.get(i).port());
    }
    return uri.toString();
  }

  public List<RedisServerProcess> nodes() {
    return List.copyOf(nodes);
  }

  private void awaitState(String... expected) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      boolean ready = true;
      for (RedisServerProcess node : nodes) {
        String info = node.command("CLUSTER", "INFO");
        for (String e : expected) {
          ready &= info.contains(e);
        }
      }
      if (ready) {
        return;
      }
      try {
        // Gossip spreads on its own clock; checking every 50 ms is the only way to see it done.
        TimeUnit.MILLISECONDS.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while forming the cluster", e);
      }
    }
    throw new IllegalStateException("The Redis Cluster did not form within 30 s");
  }

  private static void expectOk(String reply) {
    if (!reply.startsWith("+OK")) {
      throw new IllegalStateException("Redis Cluster set-up failed: " + reply.trim());
    }
  }

  @Override
  public void close() {
    nodes.forEach(RedisServerProcess::close);
  }
}
