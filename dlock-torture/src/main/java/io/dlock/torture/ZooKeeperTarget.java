package io.dlock.torture;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * A 3-member ZooKeeper ensemble in this process (curator-test). A restart kills the member that
 * leads and starts it again after the others elected a new leader.
 */
final class ZooKeeperTarget extends ZooKeeperEnsembleTarget {
  private final TestingCluster ensemble;
  private final List<InstanceSpec> specs = new ArrayList<>();

  ZooKeeperTarget() {
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
    return specs.stream().map(s -> new InetSocketAddress("127.0.0.1", s.getPort())).toList();
  }

  @Override
  public void restart() {
    InstanceSpec leader = specs.get(leader());
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

  @Override
  public void close() {
    try {
      ensemble.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
