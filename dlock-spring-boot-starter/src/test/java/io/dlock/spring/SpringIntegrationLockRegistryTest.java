package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.integration.DlockLockRegistry;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * The Spring Integration adapter, used the way Spring Integration's own lock registry tests and
 * components use a registry: two registries as two instances, tryLock / lock / unlock, reentrancy,
 * unlock by a non-owner, {@code executeLocked}, {@code renewLock}, and leader election with {@link
 * LockRegistryLeaderInitiator}.
 */
class SpringIntegrationLockRegistryTest {
  private static final String PREFIX = "si-" + UUID.randomUUID() + ":";
  private static LockClient clientA;
  private static LockClient clientB;
  private static DlockLockRegistry registryA;
  private static DlockLockRegistry registryB;

  @BeforeAll
  static void twoInstances() {
    clientA = LockClients.connect(TestRedis.uri());
    clientB = LockClients.connect(TestRedis.uri());
    registryA = new DlockLockRegistry(clientA, PREFIX, LockOptions.defaults());
    registryB = new DlockLockRegistry(clientB, PREFIX, LockOptions.defaults());
  }

  @AfterAll
  static void close() {
    clientA.close();
    clientB.close();
  }

  @Test
  void theStarterDefinesTheRegistry() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DlockAutoConfiguration.class))
        .withPropertyValues("dlock.backend=" + TestRedis.uri())
        .run(
            context ->
                assertThat(context)
                    .getBean(LockRegistry.class)
                    .isInstanceOf(DlockLockRegistry.class)
                    .isInstanceOf(RenewableLockRegistry.class));
  }

  @Test
  void oneInstanceAtATimeAndReentrantForTheHolder() throws Exception {
    Lock a = registryA.obtain("foo");
    Lock b = registryB.obtain("foo");
    assertThat(a.tryLock()).isTrue();
    try {
      assertThat(b.tryLock()).isFalse();
      assertThat(b.tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
      // Reentrant, as RedisLockRegistry and JdbcLockRegistry locks are.
      assertThat(registryA.obtain("foo").tryLock()).isTrue();
      registryA.obtain("foo").unlock();
      assertThat(b.tryLock()).isFalse();
    } finally {
      a.unlock();
    }
    assertThat(
            b.tryLock(TestTiming.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    b.unlock();
  }

  @Test
  void unlockByAThreadThatDoesNotHoldItFails() throws Exception {
    Lock lock = registryA.obtain("bar");
    lock.lock();
    try {
      CompletableFuture<Void> other =
          CompletableFuture.runAsync(() -> registryA.obtain("bar").unlock());
      assertThatThrownBy(() -> other.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalMonitorStateException.class);
      assertThat(registryB.obtain("bar").tryLock()).isFalse();
    } finally {
      lock.unlock();
    }
  }

  @Test
  void executeLockedAndRenewLock() throws Exception {
    List<String> ran = new CopyOnWriteArrayList<>();
    registryA.executeLocked(
        "baz",
        () -> {
          registryA.renewLock("baz");
          assertThat(registryB.obtain("baz").tryLock()).isFalse();
          ran.add("locked");
        });
    assertThat(ran).containsExactly("locked");
    assertThatThrownBy(() -> registryA.renewLock("baz"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not hold");
    assertThat(registryB.obtain("baz").tryLock()).isTrue();
    registryB.obtain("baz").unlock();
  }

  @Test
  void renewLockKeepsAFixedLeaseOnTheServerPastItsFirstEnd() throws Exception {
    DlockLockRegistry fixed =
        new DlockLockRegistry(
            clientA, PREFIX, LockOptions.defaults().withFixedLease(TestTiming.millis(800)));
    Lock lock = fixed.obtain("qux");
    assertThat(lock.tryLock()).isTrue();
    try {
      // Renewed by hand every 200 ms (as RedisLockRegistry users do), the 800 ms lease holds for
      // three of its lengths; without renewal, the other instance would get it after the first.
      long end = System.nanoTime() + TestTiming.millis(2400).toNanos();
      while (System.nanoTime() - end < 0) {
        fixed.renewLock("qux");
        assertThat(registryB.obtain("qux").tryLock()).isFalse();
        await().pollDelay(TestTiming.millis(200)).atMost(TestTiming.millis(1000)).until(() -> true);
      }
    } finally {
      lock.unlock();
    }
    assertThat(registryB.obtain("qux").tryLock()).isTrue();
    registryB.obtain("qux").unlock();
  }

  @Test
  void renewLockOfALockDeletedBehindTheThreadsBackFailsAndTakesNothing() {
    Lock lock = registryA.obtain("gone");
    assertThat(lock.tryLock()).isTrue();
    clientB.forceRelease(PREFIX + "gone"); // an operator breaks it

    assertThatThrownBy(() -> registryA.renewLock("gone"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'" + PREFIX + "gone'");
    // Nothing was taken anew by the renewal: another instance gets the lock.
    assertThat(registryB.obtain("gone").tryLock()).isTrue();
    registryB.obtain("gone").unlock();
    lock.unlock(); // releases nothing: the lease was lost
  }

  @Test
  void leaderElectionPassesToTheOtherInstanceWhenTheLeaderStops() {
    String role = "leader-" + UUID.randomUUID();
    Leader leaderA = new Leader("a", role);
    Leader leaderB = new Leader("b", role);
    LockRegistryLeaderInitiator initiatorA = initiator(registryA, leaderA);
    LockRegistryLeaderInitiator initiatorB = initiator(registryB, leaderB);
    try {
      initiatorA.start();
      await().atMost(TestTiming.scaled(Duration.ofSeconds(10))).until(() -> leaderA.leading);
      initiatorB.start();
      // B stays a follower while A leads.
      await()
          .during(TestTiming.millis(300))
          .atMost(TestTiming.scaled(Duration.ofSeconds(5)))
          .until(() -> !leaderB.leading);

      initiatorA.stop();
      await().atMost(TestTiming.scaled(Duration.ofSeconds(10))).until(() -> leaderB.leading);
      assertThat(leaderA.leading).isFalse();
      assertThat(leaderA.events).containsExactly("granted", "revoked");
    } finally {
      initiatorA.stop();
      initiatorB.stop();
    }
  }

  private static LockRegistryLeaderInitiator initiator(LockRegistry registry, Leader leader) {
    LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, leader);
    initiator.setHeartBeatMillis(100);
    initiator.setBusyWaitMillis(50);
    initiator.setPublishFailedEvents(false);
    return initiator;
  }

  /** A candidate that records whether it leads. */
  static final class Leader extends DefaultCandidate {
    volatile boolean leading;
    final List<String> events = new CopyOnWriteArrayList<>();

    Leader(String id, String role) {
      super(id, role);
    }

    @Override
    public void onGranted(Context ctx) {
      leading = true;
      events.add("granted");
    }

    @Override
    public void onRevoked(Context ctx) {
      leading = false;
      events.add("revoked");
    }
  }
}
