package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Reentrancy, owner ids and who may release: a thread re-enters its grant without a round trip, an
 * owner id re-enters across threads and clients with the hold count kept on the server, holds with
 * different leases never shorten the lock, only the owner can release, and a second release says it
 * did nothing.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface ReentrancyContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void sameThreadReentersTheSameGrantWithoutARoundTrip() {
    LockClient client = fixture().newClient();
    FaultyBackend backend = fixture().lastBackend();
    LockClient other = fixture().newClient();
    String lockName = fixture().name("reentrant");
    DistributedLock lock = client.lock(lockName);

    Lease outer = lock.tryAcquire().orElseThrow();
    int callsAfterOuter = backend.acquireCalls();
    Lease inner = lock.acquire(millis(1000));
    assertThat(backend.acquireCalls())
        .as("re-entry makes no backend call")
        .isEqualTo(callsAfterOuter);
    assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
    assertThat(client.heldLeases())
        .singleElement()
        .satisfies(i -> assertThat(i.holdCount()).isEqualTo(2));

    assertThat(inner.release()).isTrue();
    assertThat(other.lock(lockName).tryAcquire())
        .as("still held after one of two releases")
        .isEmpty();
    assertThat(outer.isValid()).isTrue();
    assertThat(outer.release()).isTrue();
    assertThat(other.lock(lockName).tryAcquire()).as("free after balanced releases").isPresent();
  }

  @Test
  default void ownerIdReentersAcrossThreadsAndClientsWithTheHoldCountOnTheServer()
      throws Exception {
    String lockName = fixture().name("chain");
    String owner = "request-" + UUID.randomUUID();
    LockOptions chain = LockOptions.defaults().withOwnerId(owner);
    LockClient first = fixture().newClient();
    assumeTrue(
        fixture().lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = fixture().newClient();
    LockClient stranger = fixture().newClient();

    Lease a = first.lock(lockName, chain).tryAcquire().orElseThrow();
    CompletableFuture<Lease> fromOtherThread =
        CompletableFuture.supplyAsync(
            () -> second.lock(lockName, chain).tryAcquire().orElseThrow());
    Lease b = fromOtherThread.get(10, TimeUnit.SECONDS);
    assertThat(b.fencingToken()).isEqualTo(a.fencingToken());
    assertThat(stranger.lock(lockName).tryAcquire()).isEmpty();

    assertThat(a.release()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire()).as("one hold left on the server").isEmpty();
    assertThat(b.release()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire()).isPresent();
  }

  @Test
  default void releaseByANonOwnerIsRefusedAndHarmless() throws Exception {
    LockClient holderClient = fixture().newClient();
    LockClient staleClient = fixture().newClient();
    String lockName = fixture().name("owner");
    Lease stale =
        fixture()
            .grantShortLease(
                staleClient, lockName, LockOptions.defaults().withFixedLease(millis(150)));
    Lease holder = holderClient.lock(lockName).acquire(millis(5000));

    assertThat(stale.isValid()).as("the stale holder's lease ran out").isFalse();
    assertThat(stale.release()).as("late release of an expired lease").isFalse();
    try (LockBackend raw = fixture().newBackend()) {
      assertThat(
              raw.release(lockName, LockOwner.ofGrant("not-the-owner"), holder.fencingToken())
                  .get(10, TimeUnit.SECONDS))
          .isEqualTo(ReleaseResult.NOT_HELD);
    }
    assertThat(fixture().newClient().lock(lockName).tryAcquire())
        .as("holder keeps the lock")
        .isEmpty();
    assertThat(holder.isValid()).isTrue();
    assertThat(holder.release()).isTrue();
  }

  @Test
  default void releasingTwiceIsANoOpThatSaysSo() {
    LockClient client = fixture().newClient();
    Lease lease = client.lock(fixture().name("twice")).tryAcquire().orElseThrow();
    assertThat(lease.release()).isTrue();
    assertThat(lease.release()).isFalse();
    assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class);
  }

  @Test
  default void ownerIdHoldsWithDifferentLeasesNeverShortenTheLock() {
    String lockName = fixture().name("chain-leases");
    String owner = "job-" + UUID.randomUUID();
    LockClient first = fixture().newClient();
    assumeTrue(
        fixture().lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = fixture().newClient();
    LockClient stranger = fixture().newClient();
    Lease longHold =
        first
            .lock(
                lockName,
                LockOptions.defaults().withOwnerId(owner).withRenewedLease(millis(30_000)))
            .tryAcquire()
            .orElseThrow();
    Lease shortHold =
        fixture()
            .grantShortLease(
                second,
                lockName,
                LockOptions.defaults().withOwnerId(owner).withFixedLease(millis(200)));
    assertThat(shortHold.fencingToken()).isEqualTo(longHold.fencingToken());
    await().atMost(millis(3000)).until(() -> !shortHold.isValid());
    assertThat(longHold.isValid()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire())
        .as("the short hold's end does not end the long one")
        .isEmpty();
    assertThat(shortHold.release()).as("its lease was lost").isFalse();
    assertThat(longHold.release()).isTrue();
    // The lost short hold is dropped on the server in the background (best effort).
    await()
        .atMost(millis(3000))
        .untilAsserted(() -> assertThat(stranger.lock(lockName).tryAcquire()).isPresent());
  }
}
