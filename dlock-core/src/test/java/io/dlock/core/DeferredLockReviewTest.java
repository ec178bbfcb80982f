package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review of the client that starts without its server (cda124c): what a caller gets while it
 * connects, and right when it connects.
 */
@Timeout(60)
class DeferredLockReviewTest {
  private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(300);

  private final LockClientOptions options =
      LockClientOptions.defaults().withOperationTimeout(OPERATION_TIMEOUT);
  private final AtomicBoolean serverUp = new AtomicBoolean();
  private final AtomicInteger attempts = new AtomicInteger();

  /** Released at the end of each test: a silent server's connect waits for it. */
  private final CountDownLatch answer = new CountDownLatch(1);

  /** Refused while the server is down; a new client on a fake server once it is up. */
  private final Supplier<LockClient> connect =
      () -> {
        attempts.incrementAndGet();
        if (!serverUp.get()) {
          throw new BackendUnavailableException("connection refused: 127.0.0.1:1");
        }
        return new FakeBackend(new FakeClock()).client();
      };

  /** A server that never answers a connect until {@link #answer} is released. */
  private final Supplier<LockClient> silent =
      () -> {
        attempts.incrementAndGet();
        try {
          answer.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        serverUp.set(true);
        return connect.get();
      };

  @AfterEach
  void answerEveryConnect() {
    answer.countDown();
  }

  /**
   * The bound of an asynchronous acquisition runs out on the connector's single timer thread, and
   * its future was completed right there: what the caller chained to it ran on the timer. A
   * callback that blocks (the core completes futures on threads of their own because callers'
   * callbacks may block) then held up every other call's bound, and the background retries.
   */
  @Test
  void aBlockingCallbackOfOneTimedOutAcquisitionHoldsUpNoOtherCallsBound() throws Exception {
    try (LockClient client = LockClients.connectLater("fake", "fake://silent", silent, options)) {
      Thread test = Thread.currentThread();
      CountDownLatch callbackRuns = new CountDownLatch(1);
      CountDownLatch callbackMayEnd = new CountDownLatch(1);
      CompletableFuture<Lease> first = client.lock("a").acquireAsync(Duration.ofMillis(50));
      first.whenComplete(
          (lease, failure) -> {
            if (Thread.currentThread() == test) {
              return; // completed before it was chained: not the case under test
            }
            callbackRuns.countDown();
            try {
              callbackMayEnd.await(); // the application's callback blocks
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      try {
        assertThat(callbackRuns.await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Lease> second = client.lock("b").acquireAsync(Duration.ofMillis(100));

        assertThatThrownBy(() -> second.get(5, TimeUnit.SECONDS))
            .as("the second call fails within its own bound")
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(BackendUnavailableException.class);
      } finally {
        callbackMayEnd.countDown();
      }
    }
  }

  /**
   * {@code acquire(Duration.ZERO)} is one attempt (as {@code tryAcquire}), which the core bounds by
   * the operation timeout, and the docs promise "a single attempt within the operation timeout": it
   * waited zero for the connection, so it failed even when the attempt it started (or found)
   * connected a moment later, and the first such call after the server came back did not lock.
   */
  @Test
  void oneAttemptWithoutWaitGivesTheConnectionItsOperationTimeout() throws Exception {
    CountDownLatch connectAnswers = new CountDownLatch(1);
    Supplier<LockClient> downThenSlow =
        () -> {
          if (attempts.incrementAndGet() == 1) {
            throw new BackendUnavailableException("connection refused: 127.0.0.1:1");
          }
          try {
            connectAnswers.await(); // the server is back, and answers the connect in a moment
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return new FakeBackend(new FakeClock()).client();
        };
    // A bound the connect's last step (a new client and its threads) meets on a loaded machine.
    LockClientOptions roomy = options.withOperationTimeout(Duration.ofSeconds(3));
    try (LockClient client = LockClients.connectLater("fake", "fake://back", downThenSlow, roomy)) {
      // The background's attempt after 1 s is under way; the call joins it.
      await().atMost(Duration.ofSeconds(10)).until(() -> attempts.get() == 2);
      CompletableFuture<Object> outcome = new CompletableFuture<>();
      Thread caller =
          new Thread(
              () -> {
                try {
                  outcome.complete(client.lock("job").acquire(Duration.ZERO));
                } catch (Throwable t) {
                  outcome.complete(t);
                }
              });
      caller.start();
      // The caller waits for the connection (or has already given up): only now does it answer.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> outcome.isDone() || caller.getState() == Thread.State.TIMED_WAITING);
      connectAnswers.countDown();

      assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(Lease.class);
    } finally {
      connectAnswers.countDown();
    }
  }

  /**
   * {@code Lock.lockInterruptibly()} and {@code tryLock(time, unit)} throw the checked {@link
   * InterruptedException} and clear the flag, as the core's Lock view and every {@link Lock} do;
   * the deferred view threw the unchecked {@code LockInterruptedException} (which callers of a
   * {@code Lock} do not catch) while it waited for the connection.
   */
  @Test
  void theLockViewWaitingForTheConnectionIsInterruptedAsAnyLock() {
    try (LockClient client = LockClients.connectLater("fake", "fake://silent", silent, options)) {
      Lock lock = client.lock("job").asLock();

      Thread.currentThread().interrupt();
      assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
      assertThat(Thread.interrupted()).as("the flag is cleared").isFalse();

      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> lock.tryLock(5, TimeUnit.SECONDS))
          .isInstanceOf(InterruptedException.class);
      assertThat(Thread.interrupted()).as("the flag is cleared").isFalse();
    } finally {
      Thread.interrupted();
    }
  }

  /**
   * One attempt ({@code tryAcquire}, {@code tryLock()}) ignores interrupts in the core, as {@code
   * Lock.tryLock()} does, and {@code tryAcquire} declares no interrupt; {@code lock()} waits on
   * through an interrupt. While connecting, all three threw {@code LockInterruptedException} for an
   * interrupt flag already set (the @Locked path of a thread with a pending interrupt).
   */
  @Test
  void oneAttemptAndLockIgnoreAnInterruptWhileTheyWaitForTheConnection() {
    try (LockClient client = LockClients.connectLater("fake", "fake://silent", silent, options)) {
      DistributedLock lock = client.lock("job");

      Thread.currentThread().interrupt();
      assertThatThrownBy(lock::tryAcquire).isInstanceOf(BackendUnavailableException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("the flag stays set").isTrue();

      assertThatThrownBy(() -> lock.asLock().tryLock())
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("the flag stays set").isTrue();

      assertThatThrownBy(() -> lock.asLock().lock())
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("the flag stays set").isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  /**
   * A connect that returns null (the Supplier is public API) was taken for a connection: the
   * connector stopped its threads, and every call then failed with "the lock client is closed" or a
   * NullPointerException, and never connected. It is a programming error: the start fails.
   */
  @Test
  void aConnectThatReturnsNoClientFailsTheStart() {
    Supplier<LockClient> none = () -> null;
    assertThatThrownBy(() -> LockClients.connectLater("fake", "fake://none", none, options).close())
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("no client");
  }

  /**
   * An asynchronous acquisition waiting for the connection, when the client it connects is already
   * closed (close() ran right as the attempt connected: it closed the client the attempt had just
   * stored, and the attempt then handed it to its waiters): the acquisition on it threw inside a
   * callback, where nothing saw it, and the caller's future never completed.
   */
  @Test
  void anAsyncAcquisitionOnAClientClosedAsItConnectedEndsInsteadOfHanging() throws Exception {
    Supplier<LockClient> closedAsItConnects =
        () -> {
          attempts.incrementAndGet();
          try {
            answer.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          LockClient made = new FakeBackend(new FakeClock()).client();
          made.close(); // as the racing close() does between the attempt's store and its answer
          return made;
        };
    try (LockClient client =
        LockClients.connectLater("fake", "fake://closing", closedAsItConnects, options)) {
      CompletableFuture<Lease> waiting = client.lock("job").acquireAsync(Duration.ofSeconds(30));

      answer.countDown();

      assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
          .as("the future ends (the client is closed), not after 30 s nor never")
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(IllegalStateException.class);
    }
  }

  /**
   * A client on an injected clock (MonotonicClock: "so that tests of timing logic can advance time
   * without sleeping") that stands still: the background's retry, due after one real second, found
   * the last failure less than a second ago on that clock, did nothing and scheduled no other; a
   * call could not start one either. The client never connected.
   */
  @Test
  void theBackgroundConnectsOnAnInjectedClockThatStandsStill() {
    LockClientOptions onFakeClock = options.withClock(new FakeClock(1_000_000_000L));
    try (LockClient client =
        LockClients.connectLater("fake", "fake://down", connect, onFakeClock)) {
      assertThat(client).isInstanceOf(DeferredLockClient.class);
      serverUp.set(true);

      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ((DeferredLockClient) client).connected() != null);
    }
  }
}
