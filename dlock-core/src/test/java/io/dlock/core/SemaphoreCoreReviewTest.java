package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.HeldLeaseInfo;
import io.dlock.LeaseLostEvent;
import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.Permit;
import io.dlock.spi.AcquireResult;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Review of the leased semaphore's core (7373933, deb2f17): the paths that treat lock names, seen
 * with a permit's grant name.
 */
class SemaphoreCoreReviewTest {

  @Test
  void twoPermitsOfOneClientAnsweredOutOfOrderAreBothHeld() throws Exception {
    // A lock has one grant at a time, so a lower token answered after a higher one is stale; a
    // semaphore has many: the permit answered late is as good as the other. The high-water mark
    // refused it (released it and asked again), and with a store that answers a repeated request
    // before it sees the queued release, handed out a permit the release then deleted.
    FakePermitStore store = new FakePermitStore();
    CompletableFuture<AcquireResult> first = new CompletableFuture<>();
    store.onAcquire =
        call -> store.acquires.size() == 1 ? first : FakeBackend.granted(store.tokens.get() + 11);
    CoreLockClient client = new FakeBackend(new FakeClock()).withPermitStore(store).client();
    try {
      LeasedSemaphore semaphore = client.semaphore("jobs", 5);
      CompletableFuture<Object> late = OnAnotherThread.call(semaphore::tryAcquire);
      await().until(() -> store.acquires.size() == 1);
      Permit early = semaphore.tryAcquire().orElseThrow();
      assertThat(early.fencingToken()).isEqualTo(11);
      first.complete(new AcquireResult.Granted(10, 1));

      Object outcome = late.get();
      assertThat(outcome).isInstanceOf(Optional.class);
      Permit permit = ((Optional<?>) outcome).map(Permit.class::cast).orElseThrow();
      assertThat(permit.fencingToken()).isEqualTo(10);
      assertThat(permit.isValid()).isTrue();
      assertThat(store.releases).as("neither grant given back").isEmpty();
      assertThat(store.acquires).hasSize(2);
      assertThat(client.heldLeases())
          .extracting(HeldLeaseInfo::lockName, HeldLeaseInfo::fencingToken)
          .containsExactlyInAnyOrder(
              org.assertj.core.groups.Tuple.tuple("jobs", 10L),
              org.assertj.core.groups.Tuple.tuple("jobs", 11L));
    } finally {
      client.close();
    }
  }

  @Test
  void aPermitIsNeverReenteredByItsThread() {
    FakePermitStore store = new FakePermitStore();
    CoreLockClient client = new FakeBackend(new FakeClock()).withPermitStore(store).client();
    try {
      LeasedSemaphore semaphore = client.semaphore("jobs", 5);
      Permit a = semaphore.tryAcquire().orElseThrow();
      Permit b = semaphore.tryAcquire().orElseThrow();
      Permit c = semaphore.acquire(Duration.ofSeconds(1));
      assertThat(List.of(a.fencingToken(), b.fencingToken(), c.fencingToken()))
          .containsExactly(1L, 2L, 3L);
      assertThat(store.acquires)
          .extracting(call -> call.owner().key())
          .as("a fresh grant owner each")
          .doesNotHaveDuplicates();
      assertThat(client.heldLeases()).hasSize(3);
      assertThat(a.release()).isTrue();
      assertThat(b.isValid()).as("another permit's release leaves this one").isTrue();
    } finally {
      client.close();
    }
  }

  @Test
  void grantNamesRoundTripForAnyValidSemaphoreName() {
    for (String name :
        List.of(
            "s", "a of b", " of semaphore x", "3 of 5", "semaphore ", "x of 2 of semaphore y")) {
      PermitGrantName grant = new PermitGrantName(name, 17, 3);
      assertThat(PermitGrantName.parse(grant.grantName())).isEqualTo(grant);
      assertThat(PermitGrantName.displayName(grant.grantName())).isEqualTo(name);
      assertThat(PermitGrantName.parse(name)).isNull();
    }
  }

  @Test
  void anAsyncAcquisitionCancelledBeforeItsGrantArrivesGivesTheGrantBack() {
    FakePermitStore store = new FakePermitStore();
    CompletableFuture<AcquireResult> answer = new CompletableFuture<>();
    store.onAcquire = call -> answer;
    CoreLockClient client = new FakeBackend(new FakeClock()).withPermitStore(store).client();
    try {
      CompletableFuture<Permit> permit =
          client.semaphore("jobs", 2).acquireAsync(1, Duration.ofSeconds(30));
      await().until(() -> store.acquires.size() == 1);
      assertThat(permit.cancel(false)).isTrue();
      answer.complete(new AcquireResult.Granted(7, 1));
      await().until(() -> !store.releases.isEmpty());
      assertThat(store.releases).extracting(r -> r.fencingToken()).containsExactly(7L);
      assertThat(store.releases.get(0).semaphore()).isEqualTo("jobs");
      await().until(() -> client.heldLeases().isEmpty());
    } finally {
      client.close();
    }
  }

  @Test
  void aBackendReportingALostPermitUnderItsSemaphoresNameEndsThatPermit() {
    // A store's backend knows semaphores, not the core's grant names: a session-bound hold's loss
    // comes as leaseLost(semaphore, owner key), which matched no grant (the permit stayed VALID).
    FakePermitStore store = new FakePermitStore();
    FakeBackend backend = new FakeBackend(new FakeClock()).withSessions().withPermitStore(store);
    CoreLockClient client = backend.client();
    try {
      LeasedSemaphore semaphore = client.semaphore("jobs", 2);
      Permit permit = semaphore.tryAcquire().orElseThrow();
      Permit other = semaphore.tryAcquire().orElseThrow();
      List<LeaseLostEvent> told = new CopyOnWriteArrayList<>();
      permit.onLost(told::add);
      backend.events().leaseLost("jobs", store.acquires.get(0).owner().key(), "node deleted");
      assertThat(permit.isValid()).isFalse();
      await().until(() -> told.size() == 1);
      assertThat(told.get(0).lockName()).isEqualTo("jobs");
      assertThat(other.isValid()).as("only that owner's").isTrue();
      assertThat(client.lock("jobs").tryAcquire()).isPresent();
    } finally {
      client.close();
    }
  }

  // ---- the deferred client (LockClients.connectLater) ----------------------------------------

  private final RecordingListener events = new RecordingListener();
  private final LockClientOptions options =
      LockClientOptions.defaults()
          .withOperationTimeout(Duration.ofMillis(300))
          .withEventListener(events);
  private final AtomicBoolean serverUp = new AtomicBoolean();
  private final AtomicReference<FakeBackend> made = new AtomicReference<>();

  private Supplier<LockClient> connect(boolean withPermits) {
    return () -> {
      if (!serverUp.get()) {
        throw new BackendUnavailableException("connection refused: 127.0.0.1:1");
      }
      FakeBackend backend = new FakeBackend(new FakeClock());
      if (withPermits) {
        backend.withPermitStore(new FakePermitStore());
      }
      made.set(backend);
      return backend.client();
    };
  }

  @Test
  void aDeferredClientsSemaphoreOnABackendWithoutSemaphoresIsRefusedNotTakenAsALock() {
    try (LockClient client =
        LockClients.connectLater("fake", "fake://down", connect(false), options)) {
      LeasedSemaphore semaphore = client.semaphore("jobs", 3);
      serverUp.set(true);
      await().until(() -> ((DeferredLockClient) client).connected() != null);
      assertThatThrownBy(semaphore::tryAcquire)
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("no leased semaphores");
      assertThatThrownBy(() -> semaphore.acquire(Duration.ofMillis(100)))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> semaphore.acquireAsync(1, Duration.ofMillis(100)))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThat(made.get().acquires).as("no permit sent to the lock backend as a lock").isEmpty();
    }
  }

  @Test
  void aDeferredClientTellsItsListenerOfPermitsUnderTheSemaphoresName() {
    try (LockClient client =
        LockClients.connectLater("fake", "fake://down", connect(true), options)) {
      LeasedSemaphore semaphore = client.semaphore("jobs", 3);
      assertThatThrownBy(semaphore::tryAcquire).isInstanceOf(BackendUnavailableException.class);
      assertThat(events.notAcquired)
          .singleElement()
          .satisfies(e -> assertThat(e.lockName()).isEqualTo("jobs"));
      serverUp.set(true);
      await().until(() -> ((DeferredLockClient) client).connected() != null);
      Permit permit = semaphore.tryAcquire(2).orElseThrow();
      assertThat(permit.lockName()).isEqualTo("jobs");
      assertThat(client.heldLeases()).extracting(HeldLeaseInfo::lockName).containsExactly("jobs");
      assertThat(permit.release()).isTrue();
    }
  }
}
