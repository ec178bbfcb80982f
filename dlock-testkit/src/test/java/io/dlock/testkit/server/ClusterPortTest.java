package io.dlock.testkit.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** Issue 29: a cluster node's bus port (port + 10000) was not checked, and could be taken. */
class ClusterPortTest {

  @Test
  void aClusterNodesPortLeavesItsBusPortFree() throws Exception {
    int port = RedisServerProcess.freeClusterPort();
    assertThat(port + 10000).isLessThanOrEqualTo(65535);
    try (ServerSocket bus = new ServerSocket()) {
      bus.setReuseAddress(true);
      bus.bind(new InetSocketAddress("127.0.0.1", port + 10000)); // throws if taken
    }
  }
}
