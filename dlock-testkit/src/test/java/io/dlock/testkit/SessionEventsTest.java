package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.spi.LockOwner;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Session events from a backend turn leases uncertain, valid again, or lost (exactly once). */
class SessionEventsTest {

  private final InMemoryLockBackend memory = new InMemoryLockBackend();
  private final FaultyBackend backend = new FaultyBackend(memory);

  private LockClient client() {
    return LockClients.create(backend, LockClientOptions.defaults());
  }

  private boolean freeOnTheServer(String name) {
    try (LockClient other = LockClients.create(memory.sharedView(), LockClientOptions.defaults())) {
      return other.lock(name).tryAcquire().map(Lease::release).orElse(false);
    }
  }

  @Test
  void aSuspensionWhileTheGrantIsInFlightLeavesTheNewLeaseUncertain() {
    try (LockClient client = client()) {
      backend.onNextGrant(sink -> sink.connectionSuspended("test"));
      Lease lease = client.lock("in-flight-suspended").tryAcquire().orElseThrow();
      assertThat(lease.state()).isEqualTo(LeaseState.UNCERTAIN);
      assertThat(lease.isValid()).isFalse();
      backend.events().connectionRestored();
      assertThat(lease.state()).isEqualTo(LeaseState.VALID);
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void aSessionLossWhileTheGrantIsInFlightHoldsNothingAndAWaitingAcquireTriesAgain() {
    try (LockClient client = client()) {
      backend.onNextGrant(sink -> sink.sessionLost("session expired"));
      assertThatThrownBy(() -> client.lock("in-flight-lost").tryAcquire())
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("nothing is held");
      assertThat(client.heldLeases()).isEmpty();
      await().atMost(Duration.ofSeconds(5)).until(() -> freeOnTheServer("in-flight-lost"));

      backend.onNextGrant(sink -> sink.sessionLost("session expired"));
      Lease lease = client.lock("in-flight-lost").acquire(Duration.ofSeconds(5));
      assertThat(lease.isValid()).as("granted again, in the new session").isTrue();
      assertThat(client.heldLeases()).hasSize(1);
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void aLeaseLossWhileTheGrantIsInFlightHoldsNothing() {
    try (LockClient client = client()) {
      String owner = LockOwner.ofOwnerId("request-1").key();
      backend.onNextGrant(sink -> sink.leaseLost("in-flight-node", owner, "node deleted"));
      LockOptions chain = LockOptions.defaults().withOwnerId("request-1");
      assertThatThrownBy(() -> client.lock("in-flight-node", chain).tryAcquire())
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(client.heldLeases()).isEmpty();
      await().atMost(Duration.ofSeconds(5)).until(() -> freeOnTheServer("in-flight-node"));
    }
  }

  @Test
  void suspensionMakesLeasesUncertainAndRestorationValidAgain() {
    try (LockClient client = client()) {
      Lease lease = client.lock("session").tryAcquire().orElseThrow();
      backend.events().connectionSuspended("test");
      assertThat(lease.state()).isEqualTo(LeaseState.UNCERTAIN);
      assertThat(lease.isValid()).isFalse();
      backend.events().connectionRestored();
      assertThat(lease.state()).isEqualTo(LeaseState.VALID);
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void sessionLossTellsEveryHolderOnce() {
    try (LockClient client = client()) {
      Lease a = client.lock("a").tryAcquire().orElseThrow();
      Lease b = client.lock("b").tryAcquire().orElseThrow();
      List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
      a.onLost(lost::add);
      b.onLost(lost::add);
      backend.events().connectionSuspended("test");
      backend.events().sessionLost("session expired");
      backend.events().sessionLost("again");
      await().until(() -> lost.size() == 2);
      assertThat(lost).allMatch(e -> e.reason() == LeaseLostEvent.Reason.SESSION_LOST);
      assertThat(a.state()).isEqualTo(LeaseState.LOST);
      assertThat(a.release()).isFalse();
      assertThat(lost).hasSize(2);
    }
  }

  /**
   * The undo of a grant lost in flight is slow to reach the server, and the waiting acquisition
   * tries again with the same owner. The retry must not meet the lost grant still there, be handed
   * it (same owner: a re-sent request to the server), and then lose it to the undo queued before:
   * the holder would read valid on a deleted lock.
   */
  @Test
  void aRetryAfterAGrantLostInFlightIsNotHandedTheGrantItsUndoThenDeletes() {
    ForwardingLockBackend slowReleases =
        new ForwardingLockBackend(memory) {
          @Override
          public java.util.concurrent.CompletableFuture<io.dlock.spi.ReleaseResult> release(
              String lockName, LockOwner owner, long fencingToken) {
            return java.util.concurrent.CompletableFuture.runAsync(
                    () -> {},
                    java.util.concurrent.CompletableFuture.delayedExecutor(
                        300, java.util.concurrent.TimeUnit.MILLISECONDS))
                .thenCompose(ignored -> delegate().release(lockName, owner, fencingToken));
          }
        };
    FaultyBackend faulty = new FaultyBackend(slowReleases);
    try (LockClient client = LockClients.create(faulty, LockClientOptions.defaults())) {
      faulty.onNextGrant(sink -> sink.sessionLost("session expired"));
      Lease lease = client.lock("retry-after-undo").acquire(Duration.ofSeconds(5));
      assertThat(faulty.releaseCalls()).as("the lost grant was undone").isEqualTo(1);
      // Every release sent so far has been applied once a new one, sent now, is answered.
      await()
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  slowReleases
                          .release("retry-after-undo-probe", LockOwner.ofGrant("nobody"), 0)
                          .get(5, java.util.concurrent.TimeUnit.SECONDS)
                      != null);
      assertThat(lease.isValid()).isTrue();
      assertThat(freeOnTheServer("retry-after-undo"))
          .as("the retry's lease still holds the lock on the server")
          .isFalse();
      assertThat(lease.release()).isTrue();
    }
  }
}
