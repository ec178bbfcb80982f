package io.dlock.torture;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * What every 3-member ZooKeeper ensemble under torture shares, wherever its members run: the
 * client's URI and settings (a session as long as the lease), the bounds the checker holds it to,
 * and finding the member that leads.
 */
abstract class ZooKeeperEnsembleTarget implements Target {
  /** Members tick every 200 ms, so that sessions as short as the lease are allowed. */
  static final int TICK_MILLIS = 200;

  @Override
  public String uri(List<Integer> ports) {
    return "zk://"
        + ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","))
        + "/dlock-torture";
  }

  /** The session lasts as long as the lease; an election fits in the connection timeout. */
  @Override
  public Map<String, String> properties(Duration lease) {
    return Map.of("sessionTimeout", Long.toString(lease.toMillis()), "connectionTimeout", "15000");
  }

  @Override
  public Duration holdAfterDeath(Duration lease) {
    return lease; // the session timeout, set to the lease
  }

  /** ZooKeeper: the session timeout and 1 s; the session, not a renewal, keeps the lock. */
  @Override
  public Duration nextGrantBound(Duration lease) {
    return lease.plus(Duration.ofSeconds(1));
  }

  /**
   * The index in {@link #servers()} of the member that leads; after a fault the ensemble may still
   * be electing, so ask for a while.
   */
  int leader() {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      List<InetSocketAddress> members = servers();
      for (int i = 0; i < members.size(); i++) {
        if (mode(members.get(i)).equals("leader")) {
          return i;
        }
      }
      try {
        Thread.sleep(100); // an election has no event to wait for from outside the ensemble
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    throw new IllegalStateException("no member of the ensemble leads");
  }

  /** {@code leader}, {@code follower}, or {@code down} for a member that is down or electing. */
  static String mode(InetSocketAddress member) {
    try {
      String status =
          FourLetterWordMain.send4LetterWord(
              member.getHostString(), member.getPort(), "srvr", false, 2_000);
      for (String line : status.split("\n")) {
        if (line.startsWith("Mode: ")) {
          return line.substring("Mode: ".length()).trim();
        }
      }
      return "down";
    } catch (IOException | org.apache.zookeeper.common.X509Exception.SSLContextException e) {
      return "down";
    }
  }
}
