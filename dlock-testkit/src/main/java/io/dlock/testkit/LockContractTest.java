package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInterruptedException;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.core.CoreLockClient;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every backend must meet, run against a real server. A backend's test extends this
 * class and supplies connections to its server; every timeout here scales with {@link TestTiming}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class LockContractTest {

  private final List<LockClient> clients = new CopyOnWriteArrayList<>();
  private final List<FaultyBackend> backends = new CopyOnWriteArrayList<>();
  private String prefix = "";

  /** A new backend connected to the server under test. */
  protected abstract LockBackend newBackend();

  /**
   * A backend for an address where no server listens. Either this throws {@link
   * BackendUnavailableException} or the backend's calls fail with it.
   */
  protected abstract LockBackend newBackendForUnreachableServer();

  /** Deletes the lock from the server behind its holder's back, as an operator or a bug might. */
  protected abstract void deleteLockOnServer(String name);

  /** Stops and restarts the server, when the test started it; empty for an external server. */
  protected Optional<ServerControl> serverControl() {
    return Optional.empty();
  }

  @BeforeEach
  void namePrefix(TestInfo info) {
    prefix =
        "contract-"
            + info.getTestMethod().map(m -> m.getName()).orElse("t")
            + "-"
            + UUID.randomUUID().toString().substring(0, 8)
            + "-";
  }

  @AfterEach
  void closeClients() {
    for (FaultyBackend backend : backends) {
      backend.restore();
    }
    for (LockClient client : clients) {
      try {
        client.close();
      } catch (RuntimeException e) {
        // The server may be stopped on purpose; closing must still end.
      }
    }
    clients.clear();
    backends.clear();
  }

  /** A unique lock name for this test run. */
  protected String name(String suffix) {
    return prefix + suffix;
  }

  protected LockClient newClient() {
    return newClient(LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)));
  }

  protected LockClient newClient(LockClientOptions options) {
    FaultyBackend backend = new FaultyBackend(newBackend());
    backends.add(backend);
    LockClient client = LockClients.create(backend, options);
    clients.add(client);
    return client;
  }

  /** The faulty wrapper of the backend of the client created last. */
  protected FaultyBackend lastBackend() {
    return backends.get(backends.size() - 1);
  }

  // ---- mutual exclusion -----------------------------------------------------------------------

  @Test
  void mutualExclusionAcrossThreadsAndClients() throws Exception {
    List<LockClient> pair = List.of(newClient(), newClient());
    String lockName = name("counter");
    int threads = 16;
    int rounds = 40;
    int[] counter = {0};
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        DistributedLock lock = pair.get(t % 2).lock(lockName);
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    try (Lease lease = lock.acquire(millis(30_000))) {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      int read = counter[0];
                      Thread.yield(); // widen the read-modify-write window
                      counter[0] = read + 1;
                      inside.decrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(overlaps).hasValue(0);
    assertThat(counter[0]).isEqualTo(threads * rounds);
  }

  // ---- fencing --------------------------------------------------------------------------------

  @Test
  void fencingTokensStrictlyIncreaseOverTenThousandGrantsIncludingAfterExpiry() {
    LockClient client = newClient();
    LockClient abandoning = newClient();
    String lockName = name("fence");
    DistributedLock lock = client.lock(lockName);
    DistributedLock shortLived =
        abandoning.lock(lockName, LockOptions.defaults().withFixedLease(millis(400)));
    long last = Long.MIN_VALUE;
    int expiries = 0;
    for (int i = 0; i < 10_000; i++) {
      long token;
      if (i % 2000 == 1999) {
        // A grant that is never released: the next grant comes only after it expires.
        Lease abandoned = shortLived.tryAcquire().orElseThrow();
        token = abandoned.fencingToken();
        assertThat(token).isGreaterThan(last);
        last = token;
        try (Lease afterExpiry = lock.acquire(millis(5_000))) {
          token = afterExpiry.fencingToken();
        }
        assertThat(abandoned.release()).as("release after expiry is a no-op").isFalse();
        expiries++;
      } else if (i % 2500 == 1234) {
        // The lock key deleted behind everyone's back: the counter must still go on.
        try (Lease lease = lock.tryAcquire().orElseThrow()) {
          assertThat(lease.fencingToken()).isGreaterThan(last);
          last = lease.fencingToken();
          deleteLockOnServer(lockName);
        }
        token = lock.tryAcquire().map(l -> closeAndGetToken(l)).orElseThrow();
      } else {
        try (Lease lease = lock.tryAcquire().orElseThrow()) {
          token = lease.fencingToken();
        }
      }
      assertThat(token).as("grant %d", i).isGreaterThan(last);
      last = token;
    }
    assertThat(expiries).isEqualTo(5);
  }

  private static long closeAndGetToken(Lease lease) {
    lease.close();
    return lease.fencingToken();
  }

  // ---- reentrancy and ownership ---------------------------------------------------------------

  @Test
  void sameThreadReentersTheSameGrantWithoutARoundTrip() {
    LockClient client = newClient();
    FaultyBackend backend = lastBackend();
    LockClient other = newClient();
    String lockName = name("reentrant");
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
  void ownerIdReentersAcrossThreadsAndClientsWithTheHoldCountOnTheServer() throws Exception {
    String lockName = name("chain");
    String owner = "request-" + UUID.randomUUID();
    LockOptions chain = LockOptions.defaults().withOwnerId(owner);
    LockClient first = newClient();
    assumeTrue(
        lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = newClient();
    LockClient stranger = newClient();

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
  void releaseByANonOwnerIsRefusedAndHarmless() throws Exception {
    LockClient holderClient = newClient();
    LockClient staleClient = newClient();
    String lockName = name("owner");
    Lease stale =
        staleClient
            .lock(lockName, LockOptions.defaults().withFixedLease(millis(150)))
            .tryAcquire()
            .orElseThrow();
    Lease holder = holderClient.lock(lockName).acquire(millis(5000));

    assertThat(stale.isValid()).as("the stale holder's lease ran out").isFalse();
    assertThat(stale.release()).as("late release of an expired lease").isFalse();
    try (LockBackend raw = newBackend()) {
      assertThat(
              raw.release(lockName, LockOwner.ofGrant("not-the-owner"), holder.fencingToken())
                  .get(10, TimeUnit.SECONDS))
          .isEqualTo(ReleaseResult.NOT_HELD);
    }
    assertThat(newClient().lock(lockName).tryAcquire()).as("holder keeps the lock").isEmpty();
    assertThat(holder.isValid()).isTrue();
    assertThat(holder.release()).isTrue();
  }

  @Test
  void releasingTwiceIsANoOpThatSaysSo() {
    LockClient client = newClient();
    Lease lease = client.lock(name("twice")).tryAcquire().orElseThrow();
    assertThat(lease.release()).isTrue();
    assertThat(lease.release()).isFalse();
    assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class);
  }

  // ---- waiting --------------------------------------------------------------------------------

  @Test
  void waitBoundIsHonoured() {
    LockClient holder = newClient();
    LockClient waiter = newClient();
    String lockName = name("bound");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    Duration wait = Duration.ofMillis(500);
    long start = System.nanoTime();
    assertThatThrownBy(() -> waiter.lock(lockName).acquire(wait))
        .isInstanceOf(LockTimeoutException.class)
        .hasMessageContaining(lockName);
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(took).isBetween(wait, wait.plus(millis(400)));
    held.release();
  }

  @Test
  void waiterIsWokenByTheReleaseNotByTheLeaseEnd() throws Exception {
    LockClient holder = newClient();
    LockClient waiter = newClient();
    String lockName = name("wake");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    CompletableFuture<Lease> waiting = waiter.lock(lockName).acquireAsync(millis(20_000));
    await().atMost(millis(5000)).until(() -> lastBackend().acquireCalls() >= 2);
    long released = System.nanoTime();
    held.release();
    Lease got = waiting.get(10, TimeUnit.SECONDS);
    Duration handOff = Duration.ofNanos(System.nanoTime() - released);
    // The holder's lease is 30 s: only a release signal explains a hand-off within seconds.
    assertThat(handOff).isLessThan(millis(3000));
    assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
    got.release();
  }

  @Test
  void aReleaseWakesOneWaiterPerClientNotAHerd() throws Exception {
    LockClient holder = newClient();
    LockClient waiting = newClient();
    FaultyBackend waitingLink = lastBackend();
    assumeTrue(
        waitingLink.releaseSignals().isPresent(),
        "the backend has no release signals: waiters back off");
    String lockName = name("herd");
    int waiters = 32;
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    List<CompletableFuture<Void>> chain = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      // Each waiter releases as soon as it gets the lock, so the lock passes down the queue.
      chain.add(
          waiting.lock(lockName).acquireAsync(millis(60_000)).thenAccept(lease -> lease.release()));
    }
    // Every waiter has made its first attempt and its attempt after subscribing.
    await().atMost(millis(10_000)).until(() -> waitingLink.acquireCalls() >= 2 * waiters);
    int before = waitingLink.acquireCalls();
    held.release();
    CompletableFuture.allOf(chain.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    double perHandOff = (waitingLink.acquireCalls() - before) / (double) waiters;
    assertThat(perHandOff)
        .as("acquire attempts per hand-off with %d waiters", waiters)
        .isLessThanOrEqualTo(3.0);
  }

  @Test
  void asyncAcquireCompletesAndCancellationLeavesNothingHeld() throws Exception {
    LockClient holder = newClient();
    LockClient client = newClient();
    String lockName = name("async");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    CompletableFuture<Lease> waiting = client.lock(lockName).acquireAsync(millis(30_000));
    await().atMost(millis(5000)).until(() -> lastBackend().acquireCalls() >= 1);
    assertThat(waiting.cancel(true)).isTrue();
    held.release();
    Lease lease = client.lock(lockName).acquireAsync(millis(10_000)).get(10, TimeUnit.SECONDS);
    assertThat(lease.isValid()).isTrue();
    lease.release();

    // Cancel at every moment of an acquisition of a free lock, including after the grant arrived.
    int cancelledInTime = 0;
    for (int i = 0; i < 200; i++) {
      CompletableFuture<Lease> racing = client.lock(lockName).acquireAsync(millis(10_000));
      if (i % 2 == 1) {
        Thread.yield();
      }
      if (racing.cancel(true)) {
        cancelledInTime++;
      } else {
        racing.get(10, TimeUnit.SECONDS).release();
      }
    }
    assertThat(cancelledInTime).isPositive();
    await()
        .atMost(millis(5000))
        .untilAsserted(
            () -> {
              assertThat(client.heldLeases()).isEmpty();
              assertThat(holder.lock(lockName).tryAcquire().map(this::released)).contains(true);
            });
  }

  private boolean released(Lease lease) {
    return lease.release();
  }

  // ---- leases ---------------------------------------------------------------------------------

  @Test
  void holderThatDiesWithoutReleasingIsReplacedWithinTheLease() {
    Duration lease = millis(1000);
    LockClient dying = newClient();
    FaultyBackend dyingLink = lastBackend();
    LockClient next = newClient();
    String lockName = name("crash");
    Lease held =
        dying
            .lock(lockName, LockOptions.defaults().withRenewedLease(lease))
            .tryAcquire()
            .orElseThrow();
    long died = System.nanoTime();
    dyingLink.cut(); // no release, no renewal from now on: dead as far as the server can tell
    Lease taken = next.lock(lockName).acquire(millis(10_000));
    Duration took = Duration.ofNanos(System.nanoTime() - died);
    assertThat(took).isLessThan(lease.plus(millis(1000)));
    assertThat(taken.fencingToken()).isGreaterThan(held.fencingToken());
    await().atMost(millis(3000)).until(() -> !held.isValid());
    taken.release();
  }

  @Test
  void renewalKeepsTheLockAcrossSeveralLeaseLengths() throws Exception {
    Duration lease = millis(600);
    LockClient client = newClient();
    LockClient other = newClient();
    String lockName = name("renewal");
    AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
    Lease held =
        client
            .lock(lockName, LockOptions.defaults().withRenewedLease(lease))
            .tryAcquire()
            .orElseThrow();
    held.onLost(lost::set);
    long until = System.nanoTime() + lease.multipliedBy(4).toNanos();
    int checks = 0;
    while (System.nanoTime() < until) {
      assertThat(other.lock(lockName).tryAcquire()).isEmpty();
      checks++;
      // Pacing between checks, not synchronization: the holder simply keeps working.
      Thread.sleep(100);
    }
    assertThat(checks).isGreaterThan(10);
    assertThat(held.isValid()).isTrue();
    assertThat(lost.get()).isNull();
    assertThat(held.release()).isTrue();
  }

  @Test
  void fixedLeaseIsNotRenewedAndEnds() {
    LockClient client = newClient();
    LockClient other = newClient();
    String lockName = name("fixed");
    AtomicReference<LeaseLostEvent> ended = new AtomicReference<>();
    Lease held =
        client
            .lock(lockName, LockOptions.defaults().withFixedLease(millis(300)))
            .tryAcquire()
            .orElseThrow();
    held.onLost(ended::set);
    Lease next = other.lock(lockName).acquire(millis(5000));
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    await().atMost(millis(2000)).until(() -> ended.get() != null);
    assertThat(ended.get().reason()).isEqualTo(LeaseLostEvent.Reason.LEASE_ENDED);
    assertThat(held.release()).isFalse();
    next.release();
  }

  @Test
  void lostNoticeFiresOnceWhenTheLockIsDeletedBehindTheHoldersBack() {
    LockClient client = newClient();
    String lockName = name("deleted");
    Lease held =
        client
            .lock(lockName, LockOptions.defaults().withRenewedLease(millis(900)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
    held.onLost(events::add);
    deleteLockOnServer(lockName);
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
  void lostNoticeFiresWhenTheServerIsGone() {
    Duration lease = millis(1000);
    LockClient client = newClient();
    String lockName = name("server-gone");
    Lease held =
        client
            .lock(lockName, LockOptions.defaults().withRenewedLease(lease))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
    held.onLost(events::add);
    Optional<ServerControl> control = serverControl();
    long gone = System.nanoTime();
    if (control.isPresent()) {
      control.get().stop();
    } else {
      lastBackend().cut(); // an external server cannot be stopped: cut the link instead
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

  // ---- unreachable backend --------------------------------------------------------------------

  @Test
  void unreachableServerGivesBackendUnavailableWithinTheBound() {
    long start = System.nanoTime();
    try {
      LockBackend backend = newBackendForUnreachableServer();
      LockClient client =
          LockClients.create(
              backend, LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)));
      clients.add(client);
      assertThatThrownBy(() -> client.lock(name("nowhere")).acquire(Duration.ofSeconds(3)))
          .isInstanceOf(BackendUnavailableException.class);
    } catch (BackendUnavailableException expected) {
      // Failing at connect time is as good as failing at the first call.
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(millis(3000 + 1000));
  }

  @Test
  void stoppedServerGivesBackendUnavailableWithinTheWait() {
    ServerControl control = serverControl().orElse(null);
    assumeTrue(control != null, "the server under test is external and cannot be stopped");
    LockClient client = newClient();
    String lockName = name("stopped");
    client.lock(lockName).tryAcquire().orElseThrow().release();
    control.stop();
    try {
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock(lockName).acquire(Duration.ofSeconds(3)))
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(millis(3000 + 1000));
    } finally {
      control.start();
    }
  }

  // ---- bad input ------------------------------------------------------------------------------

  @Test
  void badInputsAreRejectedNamingTheParameter() {
    LockClient client = newClient();
    assertThatThrownBy(() -> client.lock(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name")
        .hasMessageContaining("1 to " + LockNames.MAX_LENGTH);
    assertThatThrownBy(() -> client.lock("x".repeat(LockNames.MAX_LENGTH + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name");
    assertThatThrownBy(() -> client.lock("bad\nname"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("control");
    assertThatThrownBy(() -> client.lock(name("ok")).acquire(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("wait");
    assertThatThrownBy(() -> LockOptions.defaults().withRenewedLease(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime")
        .hasMessageContaining(LockOptions.MIN_LEASE.toString());
    assertThatThrownBy(() -> LockOptions.defaults().withFixedLease(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime");
    assertThatThrownBy(() -> LockOptions.defaults().withFixedLease(Duration.ofDays(8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime");
    assertThatThrownBy(() -> LockOptions.defaults().withOwnerId(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ownerId");
    assertThatThrownBy(() -> LockClientOptions.defaults().withOperationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("operationTimeout");
    assertThat(client.lock("x".repeat(LockNames.MAX_LENGTH)).tryAcquire()).isPresent();
  }

  // ---- interrupts and cancellation ------------------------------------------------------------

  @Test
  void interruptAndCancellationStormsLeaveNothingHeldOrRenewed() throws Exception {
    LockClient holderClient = newClient();
    LockClient stormClient = newClient();
    List<String> names = List.of(name("storm-a"), name("storm-b"), name("storm-c"));
    AtomicInteger acquired = new AtomicInteger();
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger timedOut = new AtomicInteger();
    List<Throwable> unexpected = new CopyOnWriteArrayList<>();
    int threads = 8;
    long stormEnd = System.nanoTime() + millis(3000).toNanos();
    // On a slow machine the storm goes on (up to 20 s) until it has both granted and interrupted.
    long hardEnd = System.nanoTime() + millis(20_000).toNanos();
    java.util.function.BooleanSupplier storming =
        () ->
            System.nanoTime() < stormEnd
                || ((acquired.get() == 0 || interrupted.get() == 0) && System.nanoTime() < hardEnd);
    List<Thread> workers = new ArrayList<>();
    CountDownLatch started = new CountDownLatch(threads);
    for (int t = 0; t < threads; t++) {
      Thread worker =
          new Thread(
              () -> {
                started.countDown();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (storming.getAsBoolean()) {
                  String lockName = names.get(random.nextInt(names.size()));
                  try (Lease lease =
                      stormClient
                          .lock(lockName)
                          .acquire(Duration.ofMillis(random.nextInt(1, 200)))) {
                    acquired.incrementAndGet();
                    lease.ensureValid();
                  } catch (LockInterruptedException e) {
                    interrupted.incrementAndGet();
                    assertThat(Thread.interrupted()).as("interrupt flag restored").isTrue();
                  } catch (LockTimeoutException e) {
                    timedOut.incrementAndGet();
                  } catch (RuntimeException | AssertionError e) {
                    unexpected.add(e);
                  }
                  Thread.interrupted(); // an interrupt that arrived after the acquire returned
                }
              });
      workers.add(worker);
      worker.start();
    }
    started.await();
    List<CompletableFuture<Lease>> asyncs = new ArrayList<>();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    while (storming.getAsBoolean()) {
      String lockName = names.get(random.nextInt(names.size()));
      // Toggle the outside holder so that waits sometimes succeed, sometimes not.
      Optional<Lease> outside = holderClient.lock(lockName).tryAcquire();
      workers.get(random.nextInt(threads)).interrupt();
      CompletableFuture<Lease> async = stormClient.lock(lockName).acquireAsync(millis(1000));
      // A lease that is granted goes back at once, so that the lock keeps moving.
      async.thenAccept(Lease::release);
      asyncs.add(async);
      if (random.nextBoolean()) {
        async.cancel(true);
      }
      outside.ifPresent(Lease::release);
      Thread.yield();
    }
    for (Thread worker : workers) {
      worker.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(worker.isAlive()).isFalse();
    }
    for (CompletableFuture<Lease> async : asyncs) {
      try {
        async.get(30, TimeUnit.SECONDS); // released as soon as it was granted
      } catch (CancellationException | ExecutionException e) {
        // cancelled or timed out: nothing to release
      }
    }
    assertThat(unexpected).as("only timeouts and interrupts may end an attempt").isEmpty();
    assertThat(interrupted.get()).isGreaterThan(0);
    assertThat(acquired.get()).isGreaterThan(0);
    CoreLockClient storm = (CoreLockClient) stormClient;
    await()
        .atMost(millis(10_000))
        .untilAsserted(
            () -> {
              assertThat(stormClient.heldLeases()).isEmpty();
              assertThat(storm.renewedLeaseCount()).isZero();
              for (String lockName : names) {
                Optional<Lease> free = holderClient.lock(lockName).tryAcquire();
                assertThat(free).as("no orphaned lock on %s", lockName).isPresent();
                free.get().release();
              }
            });
  }

  @Test
  void ownerIdHoldsWithDifferentLeasesNeverShortenTheLock() {
    String lockName = name("chain-leases");
    String owner = "job-" + UUID.randomUUID();
    LockClient first = newClient();
    assumeTrue(
        lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = newClient();
    LockClient stranger = newClient();
    Lease longHold =
        first
            .lock(
                lockName,
                LockOptions.defaults().withOwnerId(owner).withRenewedLease(millis(30_000)))
            .tryAcquire()
            .orElseThrow();
    Lease shortHold =
        second
            .lock(lockName, LockOptions.defaults().withOwnerId(owner).withFixedLease(millis(200)))
            .tryAcquire()
            .orElseThrow();
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

  /**
   * Every name the API accepts is a lock of its own on every backend: braces (Redis Cluster hash
   * tags: a name starting with "}" once made an empty tag and a CROSSSLOT error), slashes
   * (ZooKeeper paths), quotes and percent signs (SQL), wildcards (key patterns), spaces and
   * non-ASCII text.
   */
  @Test
  void namesWithBracesSlashesQuotesAndWildcardsAreLocksOfTheirOwn() {
    LockClient client = newClient();
    LockClient other = newClient();
    // Each name starts with its awkward part: a unique prefix in front would hide it.
    List<String> awkward =
        List.of(
            "}" + name("closing-brace-first"),
            "{" + name("opening-brace-first"),
            "{}" + name("empty-tag-first"),
            "}{" + name("braces-reversed"),
            "/" + name("a/b/../c"),
            "'" + name("quote'and\"double"),
            "%" + name("percent%_under"),
            "*" + name("star*question?[set]"),
            " " + name("space and text"),
            "名" + name("非ASCII"));
    List<Lease> held = new ArrayList<>();
    for (String lockName : awkward) {
      Lease lease = client.lock(lockName).tryAcquire().orElseThrow();
      assertThat(other.lock(lockName).tryAcquire()).as("'%s' excludes others", lockName).isEmpty();
      held.add(lease);
    }
    assertThat(other.lock(name("closing-brace-first")).tryAcquire())
        .as("a name is not another with its first character removed")
        .hasValueSatisfying(Lease::release);
    for (Lease lease : held) {
      assertThat(lease.release()).isTrue();
    }
    for (String lockName : awkward) {
      assertThat(other.lock(lockName).tryAcquire()).hasValueSatisfying(Lease::release);
    }
  }

  /**
   * An owner id's grant ends on the server behind its holder's back (here a forced release; in
   * production an expiry during a partition or a failover), and the same owner id is granted the
   * lock again through another client. The first holder's late release must not touch the newer
   * grant: the server checks the grant's fencing token, not only the owner.
   */
  @Test
  void aLostOwnerIdGrantsReleaseNeverFreesANewerGrantOfTheSameOwnerId() {
    String lockName = name("owner-regrant");
    LockOptions chain = LockOptions.defaults().withOwnerId("order-" + UUID.randomUUID());
    LockClient first = newClient();
    assumeTrue(
        lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = newClient();
    LockClient stranger = newClient();

    Lease old =
        first.lock(lockName, chain.withFixedLease(millis(30_000))).tryAcquire().orElseThrow();
    deleteLockOnServer(lockName);
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
  void aLostOwnerIdGrantsRenewalFindsItGoneThoughTheOwnerIdHoldsTheLockAgain() {
    String lockName = name("owner-renew");
    LockOptions chain = LockOptions.defaults().withOwnerId("order-" + UUID.randomUUID());
    LockClient first = newClient();
    assumeTrue(
        lastBackend().sharesOwnerIdsAcrossClients(),
        "the backend's locks belong to one connection: owner ids re-enter within one client only");
    LockClient second = newClient();
    LockClient stranger = newClient();

    Lease old =
        first.lock(lockName, chain.withRenewedLease(millis(900))).tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    old.onLost(lost::add);
    deleteLockOnServer(lockName);
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
  void aReleaseThatFindsTheGrantGoneTellsTheLostListeners() {
    String lockName = name("release-finds-gone");
    LockClient client = newClient();
    Lease lease =
        client
            .lock(lockName, LockOptions.defaults().withFixedLease(millis(30_000)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    lease.onLost(lost::add);
    deleteLockOnServer(lockName);

    assertThat(lease.release()).as("nothing was held any more").isFalse();
    await().atMost(millis(2000)).until(() -> !lost.isEmpty());
    assertThat(lost)
        .singleElement()
        .satisfies(e -> assertThat(e.fencingToken()).isEqualTo(lease.fencingToken()));
    assertThat(newClient().lock(lockName).tryAcquire()).isPresent();
  }

  /**
   * One client holds an owner id's grant twice; the grant ends on the server. Releasing one hold
   * learns that the owner no longer holds the lock, so the other hold must stop reading valid.
   */
  @Test
  void aReleaseThatFindsTheOwnerIdGrantGoneMarksTheRemainingHoldsLost() {
    String lockName = name("owner-not-held");
    LockOptions chain =
        LockOptions.defaults()
            .withOwnerId("order-" + UUID.randomUUID())
            .withFixedLease(millis(30_000));
    LockClient client = newClient();
    Lease outer = client.lock(lockName, chain).tryAcquire().orElseThrow();
    Lease inner = client.lock(lockName, chain).tryAcquire().orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    outer.onLost(lost::add);
    deleteLockOnServer(lockName);

    assertThat(inner.release()).isFalse();
    assertThat(outer.isValid()).as("the server said this owner holds nothing").isFalse();
    await().atMost(millis(2000)).until(() -> lost.size() == 1);
    assertThat(outer.release()).isFalse();
    assertThat(newClient().lock(lockName).tryAcquire()).isPresent();
  }

  /**
   * The session ends after the server granted but before the core registered the grant (the
   * backend's session event and its answer race). The core must apply the event to the grant in
   * flight: nothing is handed out, the grant is released on the server, a waiting acquisition tries
   * again, and no lost grant stays in the renewer.
   */
  @Test
  void aSessionLossWhileAGrantIsInFlightLeavesNothingHeld() {
    LockClient client = newClient();
    FaultyBackend backend = lastBackend();
    LockClient other = newClient();
    String lockName = name("in-flight");

    backend.onNextGrant(events -> events.sessionLost("test: session lost in flight"));
    assertThatThrownBy(() -> client.lock(lockName).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    assertThat(client.heldLeases()).isEmpty();
    assertThat(((CoreLockClient) client).renewedLeaseCount()).isZero();
    await()
        .atMost(millis(3000))
        .untilAsserted(
            () -> {
              Optional<Lease> free = other.lock(lockName).tryAcquire();
              assertThat(free).as("the grant made in flight was released").isPresent();
              free.get().release();
            });

    backend.onNextGrant(events -> events.sessionLost("test: session lost in flight"));
    Lease lease = client.lock(lockName).acquire(millis(5000));
    assertThat(lease.isValid()).isTrue();
    assertThat(other.lock(lockName).tryAcquire()).isEmpty();
    assertThat(lease.release()).isTrue();
  }

  @Test
  void aWaiterLeavingAroundAReleaseNeverSwallowsIt() throws Exception {
    LockClient holder = newClient();
    LockClient waiting = newClient();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int round = 0; round < 15; round++) {
      String lockName = name("pass-on-" + round);
      // A 30 s lease: a swallowed release would leave the patient waiter asleep for 30 s.
      Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
      long shortWait = random.nextLong(20, 80);
      CompletableFuture<Lease> impatient =
          waiting.lock(lockName).acquireAsync(Duration.ofMillis(shortWait));
      CompletableFuture<Lease> patient = waiting.lock(lockName).acquireAsync(millis(20_000));
      // Release around the moment the impatient waiter gives up.
      TimeUnit.MILLISECONDS.sleep(random.nextLong(shortWait - 10, shortWait + 10));
      long released = System.nanoTime();
      held.release();
      try {
        impatient.get(millis(30_000).toMillis(), TimeUnit.MILLISECONDS).release();
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(LockTimeoutException.class);
      }
      Lease got = patient.get(millis(30_000).toMillis(), TimeUnit.MILLISECONDS);
      assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(millis(3000));
      got.release();
    }
  }

  @Test
  void inspectionShowsTheHolderAndAForcedReleaseFreesTheLock() throws Exception {
    LockClient holderClient = newClient();
    LockClient admin = newClient();
    String lockName = name("inspected");
    List<io.dlock.LockInfo> none;
    try {
      none = admin.inspect(name("*"));
    } catch (UnsupportedOperationException e) {
      assumeTrue(false, "the backend cannot list its locks: " + e.getMessage());
      return;
    }
    assertThat(none).isEmpty();
    Lease held =
        holderClient
            .lock(lockName, LockOptions.defaults().withRenewedLease(millis(900)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    assertThat(admin.inspect(name("insp*")))
        .singleElement()
        .satisfies(
            info -> {
              assertThat(info.name()).isEqualTo(lockName);
              assertThat(info.fencingToken()).isEqualTo(held.fencingToken());
              assertThat(info.holds()).isEqualTo(1);
              assertThat(info.holder())
                  .contains(Long.toString(ProcessHandle.current().pid()))
                  .contains(Thread.currentThread().getName());
            });
    assertThat(admin.inspect(name("other*"))).isEmpty();

    Optional<io.dlock.LockInfo> broken = admin.forceRelease(lockName);
    assertThat(broken)
        .hasValueSatisfying(i -> assertThat(i.fencingToken()).isEqualTo(held.fencingToken()));
    assertThat(admin.forceRelease(lockName)).isEmpty();
    await().atMost(millis(3000)).until(() -> !lost.isEmpty());
    assertThat(lost.get(0).reason()).isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER);
    assertThat(admin.lock(lockName).tryAcquire()).isPresent();
  }

  // ---- the Lock view --------------------------------------------------------------------------

  @Test
  void lockViewBehavesLikeAReentrantLock() throws Exception {
    LockClient client = newClient();
    LockClient other = newClient();
    String lockName = name("view");
    Lock lock = client.lock(lockName).asLock();
    lock.lock();
    assertThat(lock.tryLock()).isTrue();
    assertThat(other.lock(lockName).tryAcquire()).isEmpty();
    lock.unlock();
    assertThat(other.lock(lockName).tryAcquire()).isEmpty();
    lock.unlock();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(lock::newCondition)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("newCondition");
    Lease blocker = other.lock(lockName).tryAcquire().orElseThrow();
    assertThat(lock.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
    Thread.currentThread().interrupt();
    assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse();
    blocker.release();
    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
    lock.unlock();
  }

  /** Helper for backends' own tests: the lease of a lock held by {@code client}, if any. */
  protected static @Nullable Lease tryOnce(LockClient client, String name) {
    return client.lock(name).tryAcquire().orElse(null);
  }
}
