package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous acquisitions wait without threads: thousands of them waiting on one lock cost no
 * more than the client's bounded set of acquisition threads, and each is still woken, cancelled or
 * ended by close.
 */
class AsyncWaitersTest {
  private static final int WAITERS = 2_000;

  private final InMemoryLockBackend memory = new InMemoryLockBackend();
  private final AtomicInteger attempts = new AtomicInteger();

  /** A client of the shared in-memory server whose attempts are counted. */
  private LockClient countedClient() {
    LockBackend counted =
        new ForwardingLockBackend(memory.sharedView()) {
          @Override
          public CompletableFuture<AcquireResult> tryAcquire(
              String lockName, LockOwner owner, Duration leaseTime) {
            attempts.incrementAndGet();
            return super.tryAcquire(lockName, owner, leaseTime);
          }
        };
    return LockClients.create(counted, LockClientOptions.defaults());
  }

  private static long acquisitionThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().matches("dlock-\\d+-acquire-.*"))
        .count();
  }

  @Test
  void thousandsOfWaitersOnOneLockUseABoundedSetOfThreadsAndAllGetTheLockInTurn() throws Exception {
    try (LockClient holder = LockClients.create(memory.sharedView(), LockClientOptions.defaults());
        LockClient waiting = countedClient()) {
      Lease held = holder.lock("busy").tryAcquire().orElseThrow();
      AtomicInteger granted = new AtomicInteger();
      AtomicInteger inside = new AtomicInteger();
      AtomicInteger overlaps = new AtomicInteger();
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int i = 0; i < WAITERS; i++) {
        all.add(
            waiting
                .lock("busy")
                .acquireAsync(Duration.ofSeconds(120))
                .thenAccept(
                    lease -> {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      granted.incrementAndGet();
                      inside.decrementAndGet();
                      lease.release();
                    }));
      }
      // All have made their first attempt and wait: none holds a thread now.
      await().atMost(Duration.ofSeconds(30)).until(() -> attempts.get() >= 2 * WAITERS);
      assertThat(acquisitionThreads()).isLessThanOrEqualTo(64);
      assertThat(granted).hasValue(0);

      held.release();
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
      assertThat(granted).hasValue(WAITERS);
      assertThat(overlaps).hasValue(0);
      assertThat(acquisitionThreads()).isLessThanOrEqualTo(64);
    }
  }

  @Test
  void aCancelledWaiterLeavesAndTheNextOneGetsTheLock() throws Exception {
    try (LockClient holder = LockClients.create(memory.sharedView(), LockClientOptions.defaults());
        LockClient waiting = countedClient()) {
      Lease held = holder.lock("cancel").tryAcquire().orElseThrow();
      CompletableFuture<Lease> first = waiting.lock("cancel").acquireAsync(Duration.ofSeconds(60));
      CompletableFuture<Lease> second = waiting.lock("cancel").acquireAsync(Duration.ofSeconds(60));
      await().atMost(Duration.ofSeconds(10)).until(() -> attempts.get() >= 4);
      assertThat(first.cancel(true)).isTrue();
      held.release();
      Lease lease = second.get(10, TimeUnit.SECONDS);
      assertThat(lease.isValid()).isTrue();
      assertThatThrownBy(first::join).isInstanceOf(CancellationException.class);
      lease.release();
      // Nothing of the cancelled waiter stays held: another client gets the lock at once.
      assertThat(holder.lock("cancel").tryAcquire().map(Lease::release)).contains(true);
    }
  }

  @Test
  void aWaiterWithoutASignalTimesOutAtItsDeadline() {
    try (LockClient holder = LockClients.create(memory.sharedView(), LockClientOptions.defaults());
        LockClient waiting = countedClient()) {
      holder.lock("deadline", LockOptions.defaults()).tryAcquire().orElseThrow();
      long started = System.nanoTime();
      CompletableFuture<Lease> late = waiting.lock("deadline").acquireAsync(Duration.ofMillis(300));
      assertThatThrownBy(() -> late.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(io.dlock.LockTimeoutException.class);
      assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(300_000_000L);
    }
  }

  @Test
  void closingTheClientEndsEveryWaitingAcquisition() {
    LockClient holder = LockClients.create(memory.sharedView(), LockClientOptions.defaults());
    LockClient waiting = countedClient();
    try {
      holder.lock("closing").tryAcquire().orElseThrow();
      List<CompletableFuture<Lease>> pending = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        pending.add(waiting.lock("closing").acquireAsync(Duration.ofMinutes(10)));
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> attempts.get() >= 200);
      waiting.close();
      for (CompletableFuture<Lease> future : pending) {
        assertThatThrownBy(() -> future.get(10, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(IllegalStateException.class)
            .hasMessageContaining("closed");
      }
    } finally {
      waiting.close();
      holder.close();
    }
  }
}
