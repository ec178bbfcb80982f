package io.dlock.torture;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * A 3-member ZooKeeper ensemble in this process (curator-test), ticking every 200 ms so that
 * sessions as short as the lease are allowed. A restart kills the member that leads and starts it
 * again after the others elected a new leader.
 */
final class ZooKeeperTarget implements Target {
  private static final int TICK_MILLIS = 200;
  private final TestingCluster ensemble;

  ZooKeeperTarget() {
    List<InstanceSpec> specs = new ArrayList<>();
    for (int id = 1; id <= 3; id++) {
      specs.add(
          new InstanceSpec(
              null,
              -1,
              -1,
              -1,
              true,
              id,
              TICK_MILLIS,
              -1,
              Map.of("maxSessionTimeout", "60000", "admin.enableServer", "false"),
              "127.0.0.1"));
    }
    ensemble = new TestingCluster(specs.toArray(new InstanceSpec[0]));
    try {
      ensemble.start();
    } catch (Exception e) {
      throw new IllegalStateException("cannot start a 3-member ZooKeeper ensemble", e);
    }
  }

  @Override
  public String name() {
    return "zookeeper";
  }

  @Override
  public List<InetSocketAddress> servers() {
    return ensemble.getInstances().stream()
        .map(s -> new InetSocketAddress("127.0.0.1", s.getPort()))
        .toList();
  }

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

  @Override
  public void restart() {
    InstanceSpec leader = leader();
    try {
      ensemble.killServer(leader);
      ensemble.restartServer(leader);
    } catch (Exception e) {
      throw new IllegalStateException("cannot restart ZooKeeper member " + leader, e);
    }
  }

  @Override
  public String restartDescription() {
    return "the leading member of the 3-member ensemble killed and started again";
  }

  /** The leading member; after a restart the ensemble may still be electing, so ask for a while. */
  private InstanceSpec leader() {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      InstanceSpec leader = currentLeader();
      if (leader != null) {
        return leader;
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

  private InstanceSpec currentLeader() {
    for (InstanceSpec spec : ensemble.getInstances()) {
      try {
        String status = FourLetterWordMain.send4LetterWord("127.0.0.1", spec.getPort(), "srvr");
        if (status.contains("Mode: leader")) {
          return spec;
        }
      } catch (IOException | org.apache.zookeeper.common.X509Exception.SSLContextException e) {
        // a member that is down or electing
      }
    }
    return null;
  }

  @Override
  public void close() {
    try {
      ensemble.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
