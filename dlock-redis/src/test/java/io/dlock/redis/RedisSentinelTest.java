package io.dlock.redis;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.Permit;
import io.dlock.testkit.server.RedisServerProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Redis behind Sentinel: a primary, a replica and three Sentinels, all real processes. The client
 * connects through the Sentinels and follows a failover; a lock that the promoted replica never
 * received is reported lost to its holder. Permits wait for the replica as locks do.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedisSentinelTest {
  private RedisServerProcess primary;
  private RedisServerProcess replica;
  private final List<RedisServerProcess> sentinels = new ArrayList<>();
  private final List<LockClient> clients = new ArrayList<>();
  private final String name = "sentinel-" + UUID.randomUUID();

  @BeforeEach
  void start() {
    primary = RedisServerProcess.start();
    replica =
        RedisServerProcess.start("--replicaof", "127.0.0.1", Integer.toString(primary.port()));
    for (int i = 0; i < 3; i++) {
      sentinels.add(RedisServerProcess.startSentinel("locks", primary.port(), 2));
    }
    await()
        .atMost(millis(20_000))
        .until(() -> replica.command("INFO", "replication").contains("master_link_status:up"));
    await()
        .atMost(millis(20_000))
        .until(
            () ->
                sentinels.stream()
                    .allMatch(s -> s.command("INFO", "sentinel").contains("slaves=1,sentinels=3")));
  }

  @AfterEach
  void stop() {
    clients.forEach(LockClient::close);
    if (replica.isRunning()) {
      replica.resume();
    }
    sentinels.forEach(RedisServerProcess::close);
    replica.close();
    primary.close();
  }

  private String uri() {
    StringBuilder uri = new StringBuilder("redis-sentinel://");
    for (int i = 0; i < sentinels.size(); i++) {
      uri.append(i == 0 ? "" : ",").append("127.0.0.1:").append(sentinels.get(i).port());
    }
    return uri.append("#locks").toString();
  }

  private LockClient client(RedisLockSettings settings) {
    LockClient client = RedisLocks.newClient(settings, LockClientOptions.defaults());
    clients.add(client);
    return client;
  }

  /** Locks and permits in one test: the five processes take seconds to set up. */
  @Test
  void locksAndPermitsWorkThroughSentinelAndWaitForTheReplicaWhenAsked() {
    LockClient acked =
        client(RedisLockSettings.of(uri()).withReplicaAcknowledgement(1, millis(1000)));
    LockClient other = client(RedisLockSettings.of(uri()));
    Lease lease = acked.lock(name).tryAcquire().orElseThrow();
    Permit permit = acked.semaphore(name, 2).tryAcquire(2).orElseThrow();
    assertThat(other.lock(name).tryAcquire()).isEmpty();
    assertThat(other.semaphore(name, 2).tryAcquire()).isEmpty();
    assertThat(replica.command("EXISTS", "dlock:{" + name + "}")).startsWith(":1");
    assertThat(replica.command("EXISTS", "dlock:permits{" + name + "}")).startsWith(":1");
    lease.release();
    permit.release();

    replica.pause(); // it cannot acknowledge now
    assertThatThrownBy(() -> acked.lock(name).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("replica");
    assertThatThrownBy(() -> acked.semaphore(name, 2).tryAcquire(2))
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("replica");
    replica.resume();
    assertThat(other.lock(name).tryAcquire())
        .as("the unacknowledged grant was released")
        .isPresent();
    assertThat(other.semaphore(name, 2).tryAcquire(2))
        .as("the unacknowledged permits were released")
        .isPresent();
  }

  @Test
  void aLockTheNewPrimaryNeverReceivedIsReportedLostAfterFailover() {
    LockClient holder = client(RedisLockSettings.of(uri()));
    // Cut the replication link and keep the replica from reconnecting: the grant will not reach
    // it before the primary dies (a paused process would still receive the bytes in its socket).
    replica.pause();
    primary.command("CLIENT", "KILL", "TYPE", "replica");
    Lease held =
        holder
            // Renewed every 4 s: long enough to outlast the failover (a renewal then finds the
            // new primary before the lease runs out), short enough that the loss comes soon.
            .lock(name, LockOptions.defaults().withRenewedLease(millis(12_000)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    primary.kill();
    replica.resume();
    // The Sentinels promote the replica; the client follows, and its renewal finds no lock.
    await().atMost(millis(60_000)).until(() -> !lost.isEmpty());
    assertThat(lost.get(0).reason()).isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER);
    assertThat(held.isValid()).isFalse();
    assertThat(replica.command("ROLE")).contains("master");
    LockClient next = client(RedisLockSettings.of(uri()));
    assertThat(next.lock(name).tryAcquire()).as("the new primary grants it").isPresent();
  }
}
