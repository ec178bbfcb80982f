package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.shedlock.DlockLockProvider;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The ShedLock adapter beyond ShedLock's own provider suites ({@code ShedLockSuiteOn*Test}): the
 * starter defines it; unlocked before {@code lockAtLeastFor}, the server keeps the lock only about
 * that long, also across a graceful shutdown; a second unlock fails. "Locked" is checked from
 * another client.
 */
class ShedLockProviderTest {
  private static final String PREFIX = "shedlock-" + UUID.randomUUID() + ":";
  private static LockClient client;
  private static LockClient observer;
  private static DlockLockProvider provider;

  @BeforeAll
  static void connect() {
    client = LockClients.connect(TestRedis.uri());
    observer = LockClients.connect(TestRedis.uri());
    provider = new DlockLockProvider(new LockAcquirer(client, new LockNamePatterns(PREFIX)));
  }

  @AfterAll
  static void close() {
    provider.close();
    client.close();
    observer.close();
  }

  @Test
  void theStarterDefinesTheProvider() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DlockAutoConfiguration.class))
        .withPropertyValues("dlock.backend=" + TestRedis.uri())
        .run(
            context ->
                assertThat(context)
                    .getBean(LockProvider.class)
                    .isInstanceOf(DlockLockProvider.class));
  }

  @Test
  void unlockedBeforeLockAtLeastForTheServerKeepsTheLockOnlyAboutThatLong() {
    // The release at the end of lockAtLeastFor is this process's timer: should the process die,
    // the server's lease must not outlast lockAtLeastFor by more than the slack, whatever
    // lockAtMostFor says.
    String name = name();
    provider
        .lock(config(name, Duration.ofSeconds(30), Duration.ofSeconds(2)))
        .orElseThrow()
        .unlock();

    LockInfo info = observer.inspect(PREFIX + name).get(0);
    // lockAtLeastFor, the slack and what the client takes off for drift: about 3 s, not 30.
    assertThat(info.leaseRemaining()).isNotNull().isLessThanOrEqualTo(Duration.ofMillis(3500));
    await().atMost(TestTiming.scaled(Duration.ofSeconds(10))).until(() -> isUnlocked(name));
  }

  /**
   * Regression (issue 29, finding 7): a graceful shutdown (the provider, then its client, closed)
   * released a lock unlocked before its lockAtLeastFor at once, although it is to be kept until
   * then: another instance ran the job again during a deploy. It is now left on the server, whose
   * lease ends at about lockAtLeastFor.
   */
  @Test
  void aGracefulShutdownKeepsALockUnlockedEarlyUntilLockAtLeastFor() {
    String name = name();
    LockClient shuttingDown = LockClients.connect(TestRedis.uri());
    DlockLockProvider instance =
        new DlockLockProvider(new LockAcquirer(shuttingDown, new LockNamePatterns(PREFIX)));
    LockConfiguration config = config(name, Duration.ofSeconds(30), TestTiming.millis(1500));
    instance.lock(config).orElseThrow().unlock();

    instance.close();
    shuttingDown.close();

    assertLocked(name);
    assertThat(provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)))
        .as("another instance cannot run the job yet")
        .isEmpty();
    await().atMost(TestTiming.scaled(Duration.ofSeconds(10))).until(() -> isUnlocked(name));
    assertThat(Instant.now()).isAfterOrEqualTo(config.getLockAtLeastUntil());
  }

  @Test
  void unlockTwiceFails() {
    SimpleLock lock =
        provider.lock(config(name(), Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    lock.unlock();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
  }

  private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
  }

  private static String name() {
    return "job-" + UUID.randomUUID();
  }

  private static boolean isUnlocked(String name) {
    Optional<Lease> lease = observer.lock(PREFIX + name).tryAcquire();
    lease.ifPresent(Lease::release);
    return lease.isPresent();
  }

  private static void assertLocked(String name) {
    assertThat(isUnlocked(name)).as("'%s' is locked", name).isFalse();
  }
}
