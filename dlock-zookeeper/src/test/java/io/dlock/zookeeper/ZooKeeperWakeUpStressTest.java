package io.dlock.zookeeper;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many rounds of the contract test {@code aWaiterLeavingAroundAReleaseNeverSwallowsIt} on one real
 * server, with the CPU kept busy: a holder releases around the moment an impatient waiter of
 * another client gives up, while a patient waiter of that client queues behind it. The impatient
 * waiter's abandon (which deletes its queue node, the patient waiter's predecessor) and the
 * holder's release (which deletes the node the patient waiter watches next) land in every order
 * relative to the patient waiter's in-flight attempts; whatever the order, the patient waiter must
 * be woken and get the lock promptly, never sleep through a free lock until its deadline.
 *
 * <p>The number of rounds is the system property {@code dlock.test.wakeUpRounds} (default 200).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ZooKeeperWakeUpStressTest {
  private static final int ROUNDS = Integer.getInteger("dlock.test.wakeUpRounds", 200);

  private final List<LockClient> clients = new CopyOnWriteArrayList<>();
  private final AtomicBoolean burning = new AtomicBoolean(true);
  private final List<Thread> burners = new ArrayList<>();

  @AfterEach
  void tearDown() throws InterruptedException {
    burning.set(false);
    for (Thread burner : burners) {
      burner.join(millis(5_000).toMillis());
    }
    for (LockClient client : clients) {
      client.close();
    }
  }

  private LockClient newClient(String root) {
    LockClient client =
        LockClients.create(
            ZooKeeperLockBackend.connect(
                ZooKeeperTestServers.settings(
                    ZooKeeperTestServers.single().getConnectString(), root)),
            LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)));
    clients.add(client);
    return client;
  }

  /** Busy threads, one per core, so that the backend's threads get descheduled as on a busy CI. */
  private void burnCpu() {
    for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
      Thread burner =
          new Thread(
              () -> {
                long x = 0;
                while (burning.get()) {
                  x += System.nanoTime() % 7;
                }
                if (x == 42) {
                  System.out.print(""); // keeps the loop from being optimised away
                }
              },
              "cpu-burner-" + i);
      burner.setDaemon(true);
      burner.setPriority(Thread.MIN_PRIORITY);
      burner.start();
      burners.add(burner);
    }
  }

  @Test
  void aPatientWaiterIsWokenWhateverTheOrderOfAnAbandonAndARelease() throws Exception {
    String root = "/dlock-wakeup-" + UUID.randomUUID().toString().substring(0, 8);
    LockClient holder = newClient(root);
    LockClient waiting = newClient(root);
    burnCpu();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    List<String> lost = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      String lockName = "wake-up-" + round;
      Lease held = holder.lock(lockName).tryAcquire().orElseThrow();
      // The impatient waiter's wait is the timing race under test, not a test timeout: unscaled.
      long shortWait = random.nextLong(5, 60);
      CompletableFuture<Lease> impatient =
          waiting.lock(lockName).acquireAsync(Duration.ofMillis(shortWait));
      CompletableFuture<Lease> patient = waiting.lock(lockName).acquireAsync(millis(20_000));
      // This sleep sets up the race (it synchronises nothing): release around the moment the
      // impatient waiter gives up, a little before or after.
      TimeUnit.MILLISECONDS.sleep(random.nextLong(Math.max(0, shortWait - 10), shortWait + 10));
      held.release();
      try {
        impatient.get(millis(10_000).toMillis(), TimeUnit.MILLISECONDS).release();
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(LockTimeoutException.class);
      }
      Lease got;
      try {
        got = patient.get(millis(3_000).toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // The patient waiter slept through a free lock (a lost wake-up): note it and go on, so
        // that the failure reports how often it happens.
        lost.add("round " + round + " (impatient wait " + shortWait + " ms)");
        patient.cancel(true);
        continue;
      }
      got.release();
    }
    assertThat(lost)
        .as("rounds (of %d) whose patient waiter was not woken by the release", ROUNDS)
        .isEmpty();
  }
}
