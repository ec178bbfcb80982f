package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockInterruptedException;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Interrupts, cancellation and asynchronous acquisition: an asynchronous acquisition completes, and
 * cancelling it, or interrupting a blocked one, at any moment leaves nothing held or renewed.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface CancellationContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void asyncAcquireCompletesAndCancellationLeavesNothingHeld() throws Exception {
    LockClient holder = fixture().newClient();
    LockClient client = fixture().newClient();
    String lockName = fixture().name("async");
    Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
    CompletableFuture<Lease> waiting = client.lock(lockName).acquireAsync(millis(30_000));
    await().atMost(millis(5000)).until(() -> fixture().lastBackend().acquireCalls() >= 1);
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

  @Test
  default void interruptAndCancellationStormsLeaveNothingHeldOrRenewed() throws Exception {
    LockClient holderClient = fixture().newClient();
    LockClient stormClient = fixture().newClient();
    List<String> names =
        List.of(fixture().name("storm-a"), fixture().name("storm-b"), fixture().name("storm-c"));
    AtomicInteger acquired = new AtomicInteger();
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger timedOut = new AtomicInteger();
    List<Throwable> unexpected = new CopyOnWriteArrayList<>();
    int threads = 8;
    long stormEnd = System.nanoTime() + millis(1500).toNanos();
    // On a slow machine the storm goes on (up to 20 s) until it has granted and interrupted often
    // enough for both to have met every stage of an attempt.
    long hardEnd = System.nanoTime() + millis(20_000).toNanos();
    int enough = 20; // grants, and interrupts
    java.util.function.BooleanSupplier storming =
        () ->
            System.nanoTime() < stormEnd
                || ((acquired.get() < enough || interrupted.get() < enough)
                    && System.nanoTime() < hardEnd);
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
    assertThat(interrupted.get()).isGreaterThanOrEqualTo(enough);
    assertThat(acquired.get()).isGreaterThanOrEqualTo(enough);
    await()
        .atMost(millis(10_000))
        .untilAsserted(
            () -> {
              assertThat(stormClient.heldLeases()).isEmpty();
              for (String lockName : names) {
                Optional<Lease> free = holderClient.lock(lockName).tryAcquire();
                assertThat(free).as("no orphaned lock on %s", lockName).isPresent();
                free.get().release();
              }
            });
  }
}
