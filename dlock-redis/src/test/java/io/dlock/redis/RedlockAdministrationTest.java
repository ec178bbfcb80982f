package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.testkit.net.TcpProxy;
import io.dlock.testkit.server.RedisServerProcess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Redlock's inspection and forced release (`dlock status`, `dlock release --force`) over masters
 * slower than the node timeout: each master has its command timeout (at least 1 s) for them, and
 * fewer answers than a quorum fail them instead of listing a held lock as free (CI33 saw `dlock
 * status` answer "No locks held" while a lock was held: its masters' listings took longer than the
 * 50 ms node timeout on a loaded machine).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedlockAdministrationTest {
  private final List<RedisServerProcess> masters = RedlockLockContractTest.startMasters(3);
  private final List<TcpProxy> proxies = new ArrayList<>();
  private final List<LockClient> clients = new ArrayList<>();
  private final String name = "redlock-admin-" + UUID.randomUUID();

  @BeforeEach
  void proxies() {
    for (RedisServerProcess m : masters) {
      proxies.add(new TcpProxy(new InetSocketAddress("127.0.0.1", m.port())));
    }
  }

  @AfterEach
  void stop() {
    clients.forEach(LockClient::close);
    proxies.forEach(TcpProxy::close);
    masters.forEach(RedisServerProcess::close);
  }

  /** A client with the default node timeout (50 ms), through the proxies. */
  private LockClient throughProxies() {
    LockClient client =
        LockClients.create(
            RedlockLockBackend.connect(
                RedlockSettings.of(
                    proxies.stream().map(p -> "redis://127.0.0.1:" + p.port()).toList())),
            LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(5)));
    clients.add(client);
    return client;
  }

  @Test
  void mastersSlowerThanTheNodeTimeoutStillListAndForceReleaseTheHeldLock() {
    LockClient admin = throughProxies();
    LockClient holder = throughProxies();
    Lease held = holder.lock(name).tryAcquire().orElseThrow();
    // 80 ms a round trip: past the node timeout, well within each master's command timeout.
    proxies.forEach(p -> p.delay(40));
    List<LockInfo> listed = admin.inspect(name);
    assertThat(listed).extracting(LockInfo::name).containsExactly(name);
    assertThat(listed.get(0).fencingToken()).isEqualTo(held.fencingToken());
    assertThat(admin.forceRelease(name)).isPresent();
    assertThat(admin.inspect(name)).isEmpty();
  }

  /**
   * A client starts once a majority of masters is up: a lock held on the master still connecting
   * and on one other must be listed (and found by a forced release), not judged by the two that
   * answered first (one of them holds it: below a quorum). `dlock status` is such a new client.
   */
  @Test
  void aLockHeldOnTheMasterStillConnectingIsListed() {
    proxies.get(2).refuse();
    LockClient holder = throughProxies(); // masters 0 and 1 up; 2 refuses
    Lease held = holder.lock(name).tryAcquire().orElseThrow(); // held on 0 and 1
    proxies.get(2).allow();
    proxies.get(0).delay(100); // master 0 connects last for the next client
    LockClient admin = throughProxies();
    List<LockInfo> listed = admin.inspect(name);
    assertThat(listed).extracting(LockInfo::fencingToken).containsExactly(held.fencingToken());
    assertThat(admin.forceRelease(name)).isPresent();
  }

  @Test
  void aListingThatFewerThanAQuorumAnswerFailsInsteadOfListingNothing() {
    LockClient admin = throughProxies();
    LockClient holder = throughProxies();
    holder.lock(name).tryAcquire().orElseThrow();
    proxies.get(0).cut();
    proxies.get(1).cut();
    assertThatThrownBy(() -> admin.inspect(name))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("1 of 3")
        .hasMessageContaining("needs 2");
    assertThatThrownBy(() -> admin.forceRelease(name))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("1 of 3");
  }
}
