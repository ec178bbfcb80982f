package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.testkit.net.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * A database reached through a proxy that can slow its path (the torture suite's {@code delay}: a
 * tenth of the lease each way), and the check that a lease lives on over it: a slow path is no
 * fault.
 */
final class SlowPaths {
  private static final String HOST_AND_PORT = "^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$";

  private SlowPaths() {}

  /** A proxy in front of the database of {@code url}. */
  static TcpProxy proxyTo(String url) throws Exception {
    String host = url.replaceFirst(HOST_AND_PORT, "$1");
    int port = Integer.parseInt(url.replaceFirst(HOST_AND_PORT, "$2"));
    return new TcpProxy(new InetSocketAddress(host, port));
  }

  /** A client of the database of {@code url} through {@code proxy}, with its own tables. */
  static LockClient clientThrough(
      TcpProxy proxy, String url, UnaryOperator<JdbcLockSettings> settings) {
    String hostAndPort = url.replaceFirst(HOST_AND_PORT, "$1:$2");
    return LockClients.create(
        JdbcLockBackend.connect(
            settings.apply(
                JdbcLockSettings.of(url.replace(hostAndPort, "127.0.0.1:" + proxy.port()))
                    .withCreateSchema(true))),
        LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(10)));
  }

  /**
   * Past the lease {@code lease} was first trusted for (only renewals that got through keep it), it
   * stays valid and is never reported lost.
   */
  static void keptPastItsLease(Lease lease, Duration leaseTime) {
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    lease.onLost(lost::add);
    await()
        .during(leaseTime.plus(leaseTime.dividedBy(2)))
        .atMost(leaseTime.multipliedBy(3))
        .untilAsserted(
            () -> {
              assertThat(lost).isEmpty();
              assertThat(lease.isValid()).isTrue();
            });
  }
}
