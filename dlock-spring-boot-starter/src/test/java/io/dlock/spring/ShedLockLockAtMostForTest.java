package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spring.shedlock.DlockLockProvider;
import io.dlock.testkit.FaultyBackend;
import io.dlock.testkit.ForwardingLockBackend;
import io.dlock.testkit.InMemoryLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every {@code lockAtMostFor} ShedLock accepts, with its meaning: the lock ends then, however short
 * (under the core's shortest lease, zero), however long (over its longest), and however late the
 * grant's answer comes. Held or not is asked of the server.
 */
class ShedLockLockAtMostForTest {
  private static final String PREFIX = "shedlock-most-" + UUID.randomUUID() + ":";
  private static LockClient client;
  private static DlockLockProvider provider;

  @BeforeAll
  static void connect() {
    client = LockClients.connect(TestRedis.uri());
    provider = new DlockLockProvider(new LockAcquirer(client, new LockNamePatterns(PREFIX)));
  }

  @AfterAll
  static void close() {
    provider.close();
    client.close();
  }

  @Test
  void aLockAtMostForShorterThanTheCoresShortestLeaseEndsTheLockThen() {
    String name = name();
    assertThat(provider.lock(config(name, Duration.ofMillis(50)))).isPresent();

    // The server's own lease is some seconds (the client's operation timeout and more): only the
    // adapter ending the lock at lockAtMostFor frees it within the wait.
    await().atMost(Duration.ofSeconds(3)).until(() -> held(name).isEmpty());
    assertThat(provider.lock(config(name, Duration.ofMillis(50)))).isPresent();
  }

  @Test
  void aLockWhoseLockAtMostForHasPassedWhenGrantedIsFreeOnTheServerWhenLockReturns() {
    String name = name();
    SimpleLock lock = provider.lock(config(name, Duration.ZERO)).orElseThrow();

    assertThat(held(name)).as("released before lock() returned").isEmpty();
    assertThat(lock.extend(Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
    lock.unlock(); // the job ended after its lock: nothing left to do
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aLockAtMostForLongerThanTheCoresLongestLeaseIsRenewedUntilItEnds() {
    String name = name();
    // A thousand years: more than the monotonic clock's nanoseconds can count, too.
    SimpleLock lock = provider.lock(config(name, Duration.ofDays(365L * 1000))).orElseThrow();

    // The longest lease the core gives, renewed: not the few seconds of a short lock.
    assertThat(held(name).get(0).leaseRemaining()).isNotNull().isGreaterThan(Duration.ofDays(6));
    SimpleLock extended = lock.extend(Duration.ofDays(365L * 2000), Duration.ZERO).orElseThrow();
    extended.unlock();
    assertThat(held(name)).isEmpty();
  }

  @Test
  void aLockTakenForAtMostSevenDaysIsNotExtendedBeyond() {
    String name = name();
    SimpleLock lock = provider.lock(config(name, Duration.ofSeconds(30))).orElseThrow();

    assertThatThrownBy(() -> lock.extend(Duration.ofDays(8), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot be extended by more than");
    lock.unlock(); // the refusal left the lock as it was
    assertThat(held(name)).isEmpty();
  }

  /**
   * Regression (issue 30): a grant answered after its lockAtMostFor (the lease the server was
   * given) was given back and reported as the backend being unavailable, although it answered. It
   * is a lock that has already ended, as ShedLock's own providers have it.
   */
  @Test
  void aGrantAnsweredAfterItsLockAtMostForIsALockThatHasEnded() {
    InMemoryLockBackend server = new InMemoryLockBackend();
    LateGrants late = new LateGrants(server, 400);
    LockClientOptions options =
        LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(2));
    try (LockClient slow = LockClients.create(late, options);
        DlockLockProvider slowProvider =
            new DlockLockProvider(
                new LockAcquirer(slow, new LockNamePatterns(PREFIX)), options.operationTimeout())) {
      String name = name();
      SimpleLock lock = slowProvider.lock(config(name, Duration.ofMillis(150))).orElseThrow();

      assertThat(slow.inspect(PREFIX + name)).as("released before lock() returned").isEmpty();
      assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
      late.delayMillis = 0;
      assertThat(slowProvider.lock(config(name, Duration.ofSeconds(10)))).isPresent();
    }
  }

  @Test
  void aBackendThatDoesNotAnswerIsStillReportedUnavailable() {
    FaultyBackend faulty = new FaultyBackend(new InMemoryLockBackend());
    try (LockClient cut = LockClients.create(faulty, LockClientOptions.defaults());
        DlockLockProvider cutProvider =
            new DlockLockProvider(new LockAcquirer(cut, new LockNamePatterns(PREFIX)))) {
      faulty.cut();
      assertThatThrownBy(() -> cutProvider.lock(config(name(), Duration.ofMillis(50))))
          .isInstanceOf(BackendUnavailableException.class);
    }
  }

  /** Answers every acquisition {@code delayMillis} late, as a slow network would. */
  private static final class LateGrants extends ForwardingLockBackend {
    volatile long delayMillis;

    LateGrants(LockBackend delegate, long delayMillis) {
      super(delegate);
      this.delayMillis = delayMillis;
    }

    @Override
    public CompletableFuture<AcquireResult> tryAcquire(
        String lockName, LockOwner owner, Duration lease) {
      return super.tryAcquire(lockName, owner, lease)
          .thenApplyAsync(
              answer -> answer,
              CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS));
    }
  }

  private static List<LockInfo> held(String name) {
    return client.inspect(PREFIX + name);
  }

  private static LockConfiguration config(String name, Duration atMost) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, Duration.ZERO);
  }

  private static String name() {
    return "job-" + UUID.randomUUID();
  }
}
