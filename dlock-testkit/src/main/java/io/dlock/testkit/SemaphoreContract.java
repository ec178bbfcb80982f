package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendCapability;
import io.dlock.LeaseLostEvent;
import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.Permit;
import io.dlock.PermitInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Leased semaphores on the backend ({@link LockClient#semaphore}): never more than N permits held,
 * fencing tokens that strictly increase with every grant, waiters woken when permits come back, a
 * dead holder's permits back within their lease, every loss told once, a release after a loss
 * freeing nothing else, and bad input refused. Skipped where the backend has no semaphores (its
 * refusal is the backend's own test). Part of {@link LockContractTest}.
 */
public interface SemaphoreContract {

  /** The fixture of the suite: clients, names and the backend's hooks. */
  ContractFixture fixture();

  /** A client of the server under test, skipping the test if its backend has no semaphores. */
  private LockClient semaphoreClient() {
    LockClient client = fixture().newClient();
    Assumptions.assumeTrue(
        client.capabilities().contains(BackendCapability.SEMAPHORES),
        client.backendName() + " has no semaphores in this configuration");
    return client;
  }

  private static LockOptions lease(long millis) {
    return LockOptions.defaults().withRenewedLease(millis(millis));
  }

  @Test
  default void neverMoreThanItsPermitsAreHeldAndEveryGrantHasAHigherToken() throws Exception {
    String name = fixture().name("semaphore");
    int permits = 2;
    List<LeasedSemaphore> semaphores = new ArrayList<>();
    semaphores.add(semaphoreClient().semaphore(name, permits, lease(5_000)));
    semaphores.add(fixture().newClient().semaphore(name, permits, lease(5_000)));
    AtomicInteger holding = new AtomicInteger();
    AtomicInteger mostHeld = new AtomicInteger();
    List<Long> tokens = new CopyOnWriteArrayList<>();
    ExecutorService threads = Executors.newFixedThreadPool(6);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        LeasedSemaphore semaphore = semaphores.get(t % 2);
        workers.add(
            threads.submit(
                () -> {
                  for (int i = 0; i < 4; i++) {
                    try (Permit permit = semaphore.acquire(millis(20_000))) {
                      int now = holding.incrementAndGet();
                      mostHeld.accumulateAndGet(now, Math::max);
                      tokens.add(permit.fencingToken());
                      assertThat(semaphore.holders().size()).isLessThanOrEqualTo(permits);
                      holding.decrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : workers) {
        worker.get(60, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(mostHeld.get()).as("permits held at once").isBetween(1, permits);
    assertThat(tokens).hasSize(24).doesNotHaveDuplicates();
    assertThat(semaphores.get(0).holders()).as("every permit back").isEmpty();
  }

  @Test
  default void aGrantTakesItsCountAndTheTokensOfLaterGrantsAreHigher() {
    LockClient client = semaphoreClient();
    LeasedSemaphore semaphore = client.semaphore(fixture().name("counted"), 3, lease(5_000));
    Permit two = semaphore.tryAcquire(2).orElseThrow();
    assertThat(two.count()).isEqualTo(2);
    assertThat(two.lockName()).isEqualTo(semaphore.name());
    assertThat(semaphore.tryAcquire(2)).as("2 + 2 > 3").isEmpty();
    Permit one = semaphore.tryAcquire(1).orElseThrow();
    assertThat(one.fencingToken()).isGreaterThan(two.fencingToken());
    assertThat(semaphore.tryAcquire()).as("all three held").isEmpty();

    List<PermitInfo> holders = semaphore.holders();
    assertThat(holders).extracting(PermitInfo::count).containsExactly(2, 1);
    assertThat(holders)
        .extracting(PermitInfo::fencingToken)
        .containsExactly(two.fencingToken(), one.fencingToken());
    assertThat(holders).allSatisfy(h -> assertThat(h.semaphore()).isEqualTo(semaphore.name()));
    assertThat(client.heldLeases())
        .extracting(io.dlock.HeldLeaseInfo::lockName)
        .containsOnly(semaphore.name());

    assertThat(two.release()).isTrue();
    Permit again = semaphore.tryAcquire(2).orElseThrow();
    assertThat(again.fencingToken()).isGreaterThan(one.fencingToken());
    assertThat(two.release()).as("a second release frees nothing").isFalse();
    assertThat(semaphore.tryAcquire()).as("still all three held").isEmpty();
    again.release();
    one.release();
    assertThat(semaphore.holders()).isEmpty();
  }

  @Test
  default void aWaiterIsGrantedWhenAPermitComesBack() throws Exception {
    String name = fixture().name("waited");
    LeasedSemaphore first = semaphoreClient().semaphore(name, 1, lease(10_000));
    LeasedSemaphore second = fixture().newClient().semaphore(name, 1, lease(10_000));
    Permit held = first.acquire(millis(5_000));
    CompletableFuture<Permit> waiting = second.acquireAsync(1, millis(20_000));
    assertThat(waiting).isNotDone();
    long released = System.nanoTime();
    held.release();
    Permit next = waiting.get(20, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - released))
        .as("granted soon after the release, not at the end of a lease")
        .isLessThan(millis(5_000));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    next.release();
  }

  @Test
  default void aDeadHoldersPermitComesBackWithinItsLease() {
    String name = fixture().name("dead-holder");
    Duration lease = millis(1_000);
    LeasedSemaphore dying =
        semaphoreClient().semaphore(name, 1, LockOptions.defaults().withRenewedLease(lease));
    FaultyBackend dyingLink = fixture().lastBackend();
    Permit held = dying.acquire(millis(10_000));
    LeasedSemaphore other =
        fixture().newClient().semaphore(name, 1, LockOptions.defaults().withRenewedLease(lease));
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);

    long died = System.nanoTime();
    dyingLink.cut(); // no renewal, no release: dead as far as the server can tell
    Permit next = other.acquire(millis(15_000));
    assertThat(Duration.ofNanos(System.nanoTime() - died))
        .as("back within the lease and a second")
        .isLessThan(lease.plus(millis(1_000)));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    await().atMost(millis(10_000)).until(() -> !lost.isEmpty());
    assertThat(lost).singleElement().satisfies(e -> assertThat(e.lockName()).isEqualTo(name));
    assertThat(held.release()).as("a lost permit's release frees nothing").isFalse();
    assertThat(next.isValid()).isTrue();
    next.release();
  }

  @Test
  default void aBrokenPermitsHolderIsToldOnceAndItsReleaseFreesNothingElse() {
    String name = fixture().name("broken");
    LeasedSemaphore semaphore = semaphoreClient().semaphore(name, 1, lease(900));
    Permit held = semaphore.tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);

    Optional<PermitInfo> broken = semaphore.forceRelease(held.fencingToken());
    assertThat(broken).map(PermitInfo::fencingToken).contains(held.fencingToken());
    assertThat(semaphore.forceRelease(held.fencingToken())).as("gone already").isEmpty();
    Permit next = fixture().newClient().semaphore(name, 1, lease(5_000)).acquire(millis(10_000));
    await().atMost(millis(10_000)).until(() -> !lost.isEmpty());
    assertThat(held.isValid()).isFalse();
    assertThat(held.release()).isFalse();
    assertThat(next.isValid()).as("the new holder's permit untouched").isTrue();
    assertThat(semaphore.holders())
        .extracting(PermitInfo::fencingToken)
        .containsExactly(next.fencingToken());
    assertThat(lost).hasSize(1);
    next.release();
  }

  @Test
  default void aSemaphoreAndALockOfOneNameAreApart() {
    LockClient client = semaphoreClient();
    LockClient other = fixture().newClient();
    String name = fixture().name("apart");
    try (var lease = client.lock(name).acquire(millis(5_000))) {
      Permit permit = client.semaphore(name, 1).tryAcquire().orElseThrow();
      assertThat(other.lock(name).tryAcquire()).as("the lock is still held").isEmpty();
      permit.release();
    }
    try (Permit permit = client.semaphore(name, 1).tryAcquire().orElseThrow()) {
      assertThat(other.lock(name).tryAcquire()).isPresent().get().satisfies(l -> l.release());
    }
  }

  @Test
  default void aThreadTakingTwoPermitsHoldsTwo() {
    LeasedSemaphore semaphore = semaphoreClient().semaphore(fixture().name("twice"), 2);
    Permit first = semaphore.tryAcquire().orElseThrow();
    Permit second = semaphore.tryAcquire().orElseThrow();
    assertThat(second.fencingToken()).isNotEqualTo(first.fencingToken());
    assertThat(semaphore.tryAcquire()).isEmpty();
    first.release();
    second.release();
    assertThat(semaphore.holders()).isEmpty();
  }

  @Test
  default void badInputIsRefusedNamingTheParameterAndItsRange() {
    LockClient client = semaphoreClient();
    assertThatThrownBy(() -> client.semaphore(fixture().name("zero"), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("permits")
        .hasMessageContaining("1 to " + LeasedSemaphore.MAX_PERMITS);
    assertThatThrownBy(
            () -> client.semaphore(fixture().name("huge"), LeasedSemaphore.MAX_PERMITS + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("permits");
    assertThatThrownBy(() -> client.semaphore("", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                client.semaphore(
                    fixture().name("owner"), 2, LockOptions.defaults().withOwnerId("shared")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("owner id");
    LeasedSemaphore semaphore = client.semaphore(fixture().name("counts"), 3);
    assertThatThrownBy(() -> semaphore.tryAcquire(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("count")
        .hasMessageContaining("1 to the semaphore's permits (3)");
    assertThatThrownBy(() -> semaphore.acquire(4, millis(100)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("count");
    assertThatThrownBy(() -> semaphore.acquire(1, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("wait");
  }
}
