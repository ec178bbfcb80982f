package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An owner id's grant ends on the server behind its holders' backs, and the same owner id is
 * granted the lock again <em>through the same client</em>. The contract suite covers a re-grant
 * through another client, where each client's queue node tells the grants apart; within one client
 * both grants share this backend's record of the owner's node, so only the fencing token (the
 * node's {@code czxid}) tells them apart. The earlier grant's late release or renewal must never
 * reach the newer one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperOwnerIdRegrantTest {
  private final List<LockClient> clients = new CopyOnWriteArrayList<>();
  private String root;
  private String lockName;
  private LockOptions chain;

  @BeforeEach
  void setUp() {
    root = "/dlock-regrant-" + UUID.randomUUID().toString().substring(0, 8);
    lockName = "order-" + UUID.randomUUID().toString().substring(0, 8);
    chain = LockOptions.defaults().withOwnerId("chain-" + UUID.randomUUID());
  }

  @AfterEach
  void closeClients() {
    clients.forEach(LockClient::close);
  }

  private LockClient newClient() {
    LockClient client =
        LockClients.create(
            ZooKeeperLockBackend.connect(
                ZooKeeperTestServers.settings(
                    ZooKeeperTestServers.single().getConnectString(), root)),
            LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(5)));
    clients.add(client);
    return client;
  }

  private void endTheGrantBehindItsHoldersBacks() {
    ZooKeeperTestServers.deleteLock(
        ZooKeeperTestServers.single().getConnectString(), root, lockName);
  }

  @Test
  void aLostOwnerIdGrantsLateReleaseInTheSameClientNeverFreesItsNewerGrant() {
    LockClient client = newClient();
    LockClient stranger = newClient();
    // Different lease settings: separate grants in the client, so the old one still reads valid
    // there and its release goes to the server as a plain release of a held lease.
    Lease old =
        client.lock(lockName, chain.withFixedLease(millis(30_000))).tryAcquire().orElseThrow();
    endTheGrantBehindItsHoldersBacks();
    Lease newer = client.lock(lockName, chain).tryAcquire().orElseThrow();
    assertThat(newer.fencingToken()).as("a new grant").isGreaterThan(old.fencingToken());

    assertThat(old.release()).as("the old grant was not held any more").isFalse();
    assertThat(newer.isValid()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire())
        .as("the newer grant of the same owner id still excludes everyone else")
        .isEmpty();
    assertThat(newer.release()).isTrue();
    Optional<Lease> free = stranger.lock(lockName).tryAcquire();
    assertThat(free).isPresent();
    free.get().release();
  }

  @Test
  void aLostOwnerIdGrantsRenewalInTheSameClientFindsItGoneThoughItsNewerGrantHolds() {
    LockClient client = newClient();
    LockClient stranger = newClient();
    Lease old =
        client.lock(lockName, chain.withRenewedLease(millis(900))).tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    old.onLost(lost::add);
    endTheGrantBehindItsHoldersBacks();
    Lease newer =
        client.lock(lockName, chain.withFixedLease(millis(30_000))).tryAcquire().orElseThrow();
    assertThat(newer.fencingToken()).isGreaterThan(old.fencingToken());

    // The old lease is renewed every 300 ms: its renewal must find its own grant gone.
    await().atMost(millis(3000)).until(() -> !lost.isEmpty());
    assertThat(lost)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.fencingToken()).isEqualTo(old.fencingToken());
              assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER);
            });
    assertThat(old.release()).isFalse();
    assertThat(newer.isValid()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire()).isEmpty();
    assertThat(newer.release()).isTrue();
  }
}
