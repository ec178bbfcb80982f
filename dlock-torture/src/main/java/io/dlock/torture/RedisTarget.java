package io.dlock.torture;

import io.dlock.testkit.server.RedisServerProcess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One redis-server with an append-only file synced on every write: the assumption under which Redis
 * keeps locks and fencing counters across a restart (docs/redis.md). A restart is a SIGKILL
 * followed by a start on the same port and data directory.
 *
 * <p>{@code redis-volatile} is the negative control: the same server without persistence, which
 * breaks that assumption. Its restart runs must fail (overlapping holds, tokens starting again from
 * 1), which shows the checker can see what it claims to rule out.
 */
final class RedisTarget implements Target {
  private final boolean durable;
  private final RedisServerProcess server;

  RedisTarget(boolean durable) {
    this.durable = durable;
    this.server =
        durable
            ? RedisServerProcess.start("--appendonly", "yes", "--appendfsync", "always")
            : RedisServerProcess.start();
  }

  @Override
  public String name() {
    return durable ? "redis" : "redis-volatile";
  }

  @Override
  public List<InetSocketAddress> servers() {
    return List.of(new InetSocketAddress("127.0.0.1", server.port()));
  }

  @Override
  public String uri(List<Integer> ports) {
    return "redis://127.0.0.1:" + ports.get(0);
  }

  @Override
  public Map<String, String> properties(Duration lease) {
    return Map.of();
  }

  @Override
  public Duration holdAfterDeath(Duration lease) {
    return lease;
  }

  @Override
  public void restart() {
    server.restart();
  }

  @Override
  public String restartDescription() {
    return durable
        ? "redis-server killed (SIGKILL) and started again on its append-only file"
            + " (appendfsync always)"
        : "redis-server killed (SIGKILL) and started again empty (no persistence)";
  }

  @Override
  public void close() {
    server.close();
  }
}
