package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClientOptions;
import io.dlock.LockEventListener;
import io.dlock.LockTimeoutException;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous acquisitions run in steps on a bounded set of threads: the races of a stop with the
 * end of a step, a lease nobody takes, callers' slow continuations and the wait of a queued call.
 * (Found by review; each test failed before its fix.)
 */
class AsyncAcquisitionTest {

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static ReentrantLock runnerLock(Object acquisition) throws Exception {
    Field f = AsyncAcquisition.class.getDeclaredField("runnerLock");
    f.setAccessible(true);
    return (ReentrantLock) f.get(acquisition);
  }

  @Test
  void aCloseThatLandsWhileAStepEndsStillEndsTheAcquisition() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock()).withReleaseSignals();
    AtomicInteger calls = new AtomicInteger();
    CountDownLatch inSecond = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    backend.onAcquire =
        call -> {
          if (calls.incrementAndGet() == 2) {
            inSecond.countDown();
            await(proceed);
          }
          return FakeBackend.held(null);
        };
    CoreLockClient client = backend.client();
    CompletableFuture<Lease> future = client.lock("x").acquireAsync(Duration.ofSeconds(60));
    await(inSecond);
    // Hold the step at its very end (its finally waits for this lock), after its last check of
    // whether it was stopped, and close the client then.
    ReentrantLock lock = runnerLock(future);
    lock.lock();
    try {
      proceed.countDown();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!lock.hasQueuedThreads() && System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      assertThat(lock.hasQueuedThreads()).as("the step is in its finally").isTrue();
      Thread closer = new Thread(client::close);
      closer.start();
      until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!lock.hasQueuedThreads() || lock.getQueueLength() < 2) {
        if (System.nanoTime() > until) {
          break;
        }
        Thread.onSpinWait(); // the closer waits for the lock too, in stop()
      }
    } finally {
      lock.unlock();
    }
    assertThatThrownBy(() -> future.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasRootCauseMessage("The lock client is closed");
  }

  /**
   * Regression (issue 29, finding 10): an acquisition whose grant was answered queued its future's
   * completion on the callback threads; close() then released the grant, and the queued completion
   * completed the future normally after close() returned, with a lease already released. Now a
   * completion that runs once close() has begun fails the future with the closed client's error.
   */
  @Test
  void aCompletionQueuedBeforeCloseNeverHandsOutALeaseAfterIt() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CoreLockClient client = backend.client();
    HeldCallbacks callbacks = new HeldCallbacks();
    Field f = CoreLockClient.class.getDeclaredField("asyncCallbacks");
    f.setAccessible(true);
    f.set(client, callbacks);

    CompletableFuture<Lease> future = client.lock("z").acquireAsync(Duration.ofSeconds(5));
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> callbacks.queued.size() == 1); // granted; its completion is queued
    client.close();
    assertThatThrownBy(() -> future.getNow(null))
        .as("ended by close() itself")
        .hasRootCauseMessage("The lock client is closed");
    callbacks.queued.forEach(Runnable::run); // the callback thread gets to it only now

    assertThatThrownBy(() -> future.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasRootCauseMessage("The lock client is closed");
    assertThat(backend.releases).as("the grant was released once, by close()").hasSize(1);
  }

  /**
   * Regression (issue 29, the review's suspicion, confirmed): when the callback threads could not
   * take the completion (an {@code Error}: no thread could be created), the future stayed pending
   * forever while its grant was held and renewed. It now completes on the step's thread.
   */
  @Test
  void aCompletionNoThreadCanRunIsRunOnTheStepsThread() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CoreLockClient client = backend.client();
    Field f = CoreLockClient.class.getDeclaredField("asyncCallbacks");
    f.setAccessible(true);
    f.set(
        client,
        new HeldCallbacks() {
          @Override
          public void execute(Runnable command) {
            throw new OutOfMemoryError("unable to create native thread (test)");
          }
        });
    try {
      Lease lease = client.lock("w").acquireAsync(Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS);
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.release()).isTrue();
    } finally {
      client.close();
    }
  }

  /** Callback threads that run nothing until the test runs what was queued. */
  private static class HeldCallbacks extends java.util.concurrent.AbstractExecutorService {
    final List<Runnable> queued = new CopyOnWriteArrayList<>();
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable command) {
      if (shutdown) {
        throw new java.util.concurrent.RejectedExecutionException("shut down");
      }
      queued.add(command);
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }
  }

  @Test
  void aLeaseForACallerWhoCancelledIsReleasedAndTheAcquisitionEndsOnce() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    List<String> events = new CopyOnWriteArrayList<>();
    AtomicReference<CompletableFuture<Lease>> future = new AtomicReference<>();
    LockEventListener listener =
        new LockEventListener() {
          @Override
          public void acquired(String lockName, long token, Duration latency, Duration waited) {
            events.add("acquired");
            future.get().cancel(true); // the caller gives up just as the grant arrives
          }

          @Override
          public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
            events.add("notAcquired:" + failure);
          }
        };
    CountDownLatch go = new CountDownLatch(1);
    backend.onAcquire =
        call -> {
          await(go);
          return FakeBackend.granted(7);
        };
    backend.onRelease = call -> CompletableFuture.failedFuture(new RuntimeException("down"));
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(
                backend, LockClientOptions.defaults().withEventListener(listener));
    future.set(client.lock("y").acquireAsync(Duration.ofSeconds(5)));
    go.countDown();
    assertThatThrownBy(() -> future.get().get(10, TimeUnit.SECONDS))
        .isInstanceOf(java.util.concurrent.CancellationException.class);
    client.close(); // waits for the acquisition's steps
    assertThat(events).containsExactly("acquired");
    assertThat(backend.releases).as("the lease nobody took was released").hasSize(1);
  }

  /**
   * Issue 29 ("left open"): an acquisition whose future is cancelled after its attempt was granted
   * (here: by the {@code acquired} listener itself) has reported {@code acquired} before it finds
   * the future cancelled. Shown harmless: the grant did exist on the server, and listeners are told
   * of its release right after, with the same token, so every count of holds (metrics, spans)
   * returns to where it was. (Cancelled while the attempt is out, the grant is released as
   * abandoned and reported to no listener: neither acquired nor released.)
   */
  @Test
  void aGrantForAFutureCancelledAfterTheGrantIsReportedAcquiredThenReleased() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    List<String> events = new CopyOnWriteArrayList<>();
    AtomicReference<CompletableFuture<Lease>> future = new AtomicReference<>();
    LockEventListener listener =
        new LockEventListener() {
          @Override
          public void acquired(String lockName, long token, Duration latency, Duration waited) {
            events.add("acquired:" + token);
            future.get().cancel(true); // the caller gives up just as the grant arrives
          }

          @Override
          public void released(String lockName, long token, Duration held) {
            events.add("released:" + token);
          }
        };
    CountDownLatch go = new CountDownLatch(1);
    backend.onAcquire =
        call -> {
          await(go);
          return FakeBackend.granted(7);
        };
    CoreLockClient client =
        (CoreLockClient)
            CoreLockClient.create(
                backend, LockClientOptions.defaults().withEventListener(listener));
    try {
      future.set(client.lock("y").acquireAsync(Duration.ofSeconds(5)));
      go.countDown();
      assertThatThrownBy(() -> future.get().get(10, TimeUnit.SECONDS))
          .isInstanceOf(java.util.concurrent.CancellationException.class);
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> events.size() == 2);
      assertThat(events).containsExactly("acquired:7", "released:7");
      assertThat(backend.releases)
          .extracting(FakeBackend.ReleaseCall::fencingToken)
          .containsExactly(7L);
      assertThat(client.grants()).as("nothing is left held or renewed").isEmpty();
    } finally {
      client.close();
    }
  }

  @Test
  void slowContinuationsOfCallersDoNotHoldUpOtherAcquisitions() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    // No grant before every continuation is attached: one attached to a future already complete
    // would run on the test's own thread instead of dlock's, and block it.
    CountDownLatch attached = new CountDownLatch(1);
    backend.onAcquire =
        call -> {
          if (call.lockName().startsWith("job-")) {
            await(attached);
          }
          return FakeBackend.granted(backend.nextToken());
        };
    CoreLockClient client = backend.client();
    // As many blocked continuations as the client has acquisition threads (64): were they run on
    // those threads, none would be left for another acquisition.
    int continuations = 64;
    CountDownLatch blocked = new CountDownLatch(continuations);
    CountDownLatch unblock = new CountDownLatch(1);
    Set<String> continuationThreads = ConcurrentHashMap.newKeySet();
    try {
      for (int i = 0; i < continuations; i++) {
        client
            .lock("job-" + i)
            .acquireAsync(Duration.ofSeconds(1))
            .thenAccept(
                lease -> {
                  continuationThreads.add(Thread.currentThread().getName());
                  blocked.countDown();
                  try {
                    unblock.await(); // a caller's continuation that blocks, for as long as it takes
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
      }
      attached.countDown();
      await(blocked);
      CompletableFuture<Lease> other = client.lock("free").acquireAsync(Duration.ZERO);
      // Continuations on the acquisition threads would block them for good: this would time out.
      assertThat(other.get(10, TimeUnit.SECONDS).isValid()).isTrue();
      assertThat(continuationThreads).noneMatch(name -> name.contains("-acquire-"));
    } finally {
      unblock.countDown();
      client.close();
    }
  }

  @Test
  void theWaitCountsFromTheCallEvenWhenTheFirstStepWaitsForAThread() throws Exception {
    FakeClock clock = new FakeClock();
    FakeBackend backend = new FakeBackend(clock);
    CountDownLatch stepsBusy = new CountDownLatch(64);
    CountDownLatch free = new CountDownLatch(1);
    backend.onAcquire =
        call -> {
          if (call.lockName().startsWith("busy-")) {
            stepsBusy.countDown();
            await(free); // every acquisition thread is busy with these
          }
          return FakeBackend.held(Duration.ofHours(1));
        };
    CoreLockClient client = backend.client();
    try {
      for (int i = 0; i < 64; i++) {
        client.lock("busy-" + i).acquireAsync(Duration.ZERO);
      }
      await(stepsBusy);
      CompletableFuture<Lease> queued = client.lock("late").acquireAsync(Duration.ofSeconds(5));
      clock.advance(Duration.ofSeconds(6)); // the wait passes while the call waits for a thread
      free.countDown();
      assertThatThrownBy(() -> queued.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(LockTimeoutException.class);
      assertThat(backend.acquires.stream().filter(c -> c.lockName().equals("late")))
          .as("one attempt, as a blocking caller makes, and no wait after it")
          .hasSize(1);
    } finally {
      client.close();
    }
  }
}
