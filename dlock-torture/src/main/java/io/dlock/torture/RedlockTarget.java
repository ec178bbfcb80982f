package io.dlock.torture;

import io.dlock.testkit.net.TcpProxy;
import io.dlock.testkit.server.RedisServerProcess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Redlock over 5 independent redis-server masters, each with an append-only file synced on every
 * write, one of them blackholed from the start: every client reaches the fifth master through a
 * proxy that is cut for the whole life of the target (connections are accepted, nothing passes, as
 * with a master on a dead network). A quorum is 3, so the 4 reachable masters leave one to lose. A
 * restart kills one of the 4 reachable masters (SIGKILL; taking turns), keeps it dead for a lease
 * (every grant then needs all 3 masters left) and starts it again on its append-only file.
 */
final class RedlockTarget implements Target {
  private static final int MASTERS = 5;
  private static final Duration NODE_TIMEOUT = Duration.ofMillis(100);
  private final List<RedisServerProcess> masters = new ArrayList<>();
  private final TcpProxy blackhole;
  private int nextVictim;

  RedlockTarget() {
    for (int i = 0; i < MASTERS; i++) {
      masters.add(RedisServerProcess.start("--appendonly", "yes", "--appendfsync", "always"));
    }
    blackhole = new TcpProxy(new InetSocketAddress("127.0.0.1", masters.get(MASTERS - 1).port()));
    blackhole.cut();
  }

  @Override
  public String name() {
    return "redlock";
  }

  /** The 4 masters, and the blackhole in front of the fifth. */
  @Override
  public List<InetSocketAddress> servers() {
    List<InetSocketAddress> out = new ArrayList<>();
    for (int i = 0; i < MASTERS - 1; i++) {
      out.add(new InetSocketAddress("127.0.0.1", masters.get(i).port()));
    }
    out.add(new InetSocketAddress("127.0.0.1", blackhole.port()));
    return out;
  }

  /** Each master answers or is given up within 100 ms, a twentieth of the default lease. */
  @Override
  public String uri(List<Integer> ports) {
    return "redlock://"
        + ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","))
        + "?nodeTimeout="
        + NODE_TIMEOUT;
  }

  /**
   * The node timeout: a master slower than that counts as down (redlock.md), so a {@code delay} of
   * every path beyond it is all masters down.
   */
  @Override
  public Optional<Duration> perCallBound() {
    return Optional.of(NODE_TIMEOUT);
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
    RedisServerProcess victim = masters.get(nextVictim);
    nextVictim = (nextVictim + 1) % (MASTERS - 1);
    victim.kill();
    try {
      // Dead for a lease: the fault is the time without the master, not synchronized with anything.
      Thread.sleep(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    victim.restart();
  }

  @Override
  public String restartDescription() {
    return "one of the 4 reachable masters killed (SIGKILL), dead for 2 s, started again on its"
        + " append-only file (the fifth is blackholed throughout)";
  }

  @Override
  public void close() {
    blackhole.close();
    masters.forEach(RedisServerProcess::close);
  }
}
