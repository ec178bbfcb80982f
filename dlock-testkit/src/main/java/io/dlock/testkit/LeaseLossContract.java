package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Losing a lease: when a grant ends behind its holder's back (the lock deleted on the server, the
 * server gone, an owner id granted again elsewhere) the holder is told once, its lease stops
 * reading valid, and its late release or renewal never touches a newer grant.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface LeaseLossContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void lostNoticeFiresOnceWhenTheLockIsDeletedBehindTheHoldersBack() {
    LockClient client = fixture().newClient();
    String lockName = fixture().name("deleted");
    Lease held =
        client
            .lock(lockName, LockOptions.defaults().withRenewedLease(millis(900)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
    held.onLost(events::add);
    fixture().deleteLockOnServer(lockName);
    await().atMost(millis(2000)).until(() -> !events.isEmpty());
    assertThat(events)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER);
              assertThat(e.fencingToken()).isEqualTo(held.fencingToken());
            });
    assertThat(held.isValid()).isFalse();
    assertThatThrownBy(held::ensureValid).isInstanceOf(io.dlock.LockLostException.class);
    List<LeaseLostEvent> late = new CopyOnWriteArrayList<>();
    held.onLost(late::add);
    await().atMost(millis(1000)).until(() -> late.size() == 1);
    assertThat(held.release()).isFalse();
    assertThat(events).hasSize(1);
  }

  @Test
  default void lostNoticeFiresWhenTheServerIsGone() {
    Duration lease = millis(1000);
    LockClient client = fixture().newClient();
    String lockName = fixture().name("server-gone");
    Lease held =
        client
            .lock(lockName, LockOptions.defaults().withRenewedLease(lease))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
    held.onLost(events::add);
    Optional<ServerControl> control = fixture().serverControl();
    long gone = System.nanoTime();
    if (control.isPresent()) {
      control.get().stop();
    } else {
      fixture().lastBackend().cut(); // an external server cannot be stopped: cut the link instead
    }
    try {
      await().atMost(lease.plus(millis(1500))).until(() -> !events.isEmpty());
      assertThat(Duration.ofNanos(System.nanoTime() - gone)).isLessThan(lease.plus(millis(1000)));
      assertThat(events)
          .singleElement()
          .satisfies(e -> assertThat(e.reason()).isEqualTo(LeaseLostEvent.Reason.EXPIRED));
      assertThat(held.isValid()).isFalse();
    } finally {
      control.ifPresent(ServerControl::start);
    }
  }

  /**
   * An owner id's grant ends on the server behind its holder's back (here a forced release; in
   * production an expiry during a partition or a failover), and the same owner id is granted the
   * lock again through another client. The first holder's late release must not touch the newer
   * grant: the server checks the grant's fencing token, not only the owner.
   */
  @Test
  default void aLostOwnerIdGrantsReleaseNeverFreesANewerGrantOfTheSameOwnerId() {
    String lockName = fixture().name("owner-regrant");
    LockOptions chain = LockOptions.defaults().withOwnerId("order-" + UUID.randomUUID());
    LockClient first = fixture().newClient();
    assumeTrue(
        fixture().lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = fixture().newClient();
    LockClient stranger = fixture().newClient();

    Lease old =
        first.lock(lockName, chain.withFixedLease(millis(30_000))).tryAcquire().orElseThrow();
    fixture().deleteLockOnServer(lockName);
    Lease newer = second.lock(lockName, chain).tryAcquire().orElseThrow();
    assertThat(newer.fencingToken()).as("a new grant").isGreaterThan(old.fencingToken());

    assertThat(old.release()).as("the old grant was not held any more").isFalse();
    assertThat(newer.isValid()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire())
        .as("the newer grant of the same owner id still excludes everyone else")
        .isEmpty();
    assertThat(newer.release()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire()).isPresent();
  }

  /**
   * As above, for renewal: the first holder's renewal must find its grant gone (and tell it so),
   * not extend the newer grant that carries the same owner id.
   */
  @Test
  default void aLostOwnerIdGrantsRenewalFindsItGoneThoughTheOwnerIdHoldsTheLockAgain() {
    String lockName = fixture().name("owner-renew");
    LockOptions chain = LockOptions.defaults().withOwnerId("order-" + UUID.randomUUID());
    LockClient first = fixture().newClient();
    assumeTrue(
        fixture().lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = fixture().newClient();
    LockClient stranger = fixture().newClient();

    Lease old =
        first.lock(lockName, chain.withRenewedLease(millis(900))).tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    old.onLost(lost::add);
    fixture().deleteLockOnServer(lockName);
    Lease newer = second.lock(lockName, chain).tryAcquire().orElseThrow();
    assertThat(newer.fencingToken()).isGreaterThan(old.fencingToken());

    await().atMost(millis(3000)).until(() -> !lost.isEmpty());
    assertThat(lost)
        .singleElement()
        .satisfies(e -> assertThat(e.fencingToken()).isEqualTo(old.fencingToken()));
    assertThat(old.isValid()).isFalse();
    assertThat(old.release()).isFalse();
    assertThat(newer.isValid()).isTrue();
    assertThat(stranger.lock(lockName).tryAcquire()).isEmpty();
    assertThat(newer.release()).isTrue();
  }

  /**
   * The grant ends on the server while its holder is about to release it (a session lost, a forced
   * release). The release finds it gone: it returns false, and the lease's lost listeners are told,
   * as they would have been had a renewal found it first. A lost lease is never silent.
   */
  @Test
  default void aReleaseThatFindsTheGrantGoneTellsTheLostListeners() {
    String lockName = fixture().name("release-finds-gone");
    LockClient client = fixture().newClient();
    Lease lease =
        client
            .lock(lockName, LockOptions.defaults().withFixedLease(millis(30_000)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    lease.onLost(lost::add);
    fixture().deleteLockOnServer(lockName);

    assertThat(lease.release()).as("nothing was held any more").isFalse();
    await().atMost(millis(2000)).until(() -> !lost.isEmpty());
    assertThat(lost)
        .singleElement()
        .satisfies(e -> assertThat(e.fencingToken()).isEqualTo(lease.fencingToken()));
    assertThat(fixture().newClient().lock(lockName).tryAcquire()).isPresent();
  }

  /**
   * One client holds an owner id's grant twice; the grant ends on the server. Releasing one hold
   * learns that the owner no longer holds the lock, so the other hold must stop reading valid.
   */
  @Test
  default void aReleaseThatFindsTheOwnerIdGrantGoneMarksTheRemainingHoldsLost() {
    String lockName = fixture().name("owner-not-held");
    LockOptions chain =
        LockOptions.defaults()
            .withOwnerId("order-" + UUID.randomUUID())
            .withFixedLease(millis(30_000));
    LockClient client = fixture().newClient();
    Lease outer = client.lock(lockName, chain).tryAcquire().orElseThrow();
    Lease inner = client.lock(lockName, chain).tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    outer.onLost(lost::add);
    fixture().deleteLockOnServer(lockName);

    assertThat(inner.release()).isFalse();
    assertThat(outer.isValid()).as("the server said this owner holds nothing").isFalse();
    await().atMost(millis(2000)).until(() -> lost.size() == 1);
    assertThat(outer.release()).isFalse();
    assertThat(fixture().newClient().lock(lockName).tryAcquire()).isPresent();
  }
}
