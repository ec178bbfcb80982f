package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Session mode: an owner id whose grant was force-released (its session killed) asks again before
 * the heartbeat noticed. The re-entry check finds the connection dead; the report of the old
 * grant's loss must not undo the new grant, which is granted at once and stays valid, while the old
 * hold is told it lost the lock.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OwnerIdReacquireAfterForcedReleaseTest {
  @Test
  void aTryAcquireAfterAForcedReleaseIsGrantedAndTheOldHoldIsToldItsLoss() throws Exception {
    // A heartbeat too rare to notice the kill first: the re-entry check meets the dead connection.
    JdbcLockSettings settings =
        TestDatabases.settings(TestDatabases.postgres(), JdbcLockMode.SESSION)
            .withHeartbeatInterval(Duration.ofMinutes(1));
    String name = "reacquire-" + UUID.randomUUID();
    LockOptions options =
        LockOptions.defaults().withOwnerId("x").withFixedLease(Duration.ofSeconds(30));
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient admin = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      Lease old = client.lock(name, options).tryAcquire().orElseThrow();
      List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
      old.onLost(lost::add);
      assertThat(admin.forceRelease(name)).isPresent();

      Lease fresh =
          client
              .lock(name, options)
              .tryAcquire()
              .orElseThrow(
                  () -> new AssertionError("the free lock was not granted to its former owner id"));
      assertThat(fresh.fencingToken()).isGreaterThan(old.fencingToken());
      await().atMost(millis(3_000)).until(() -> !lost.isEmpty());
      assertThat(old.isValid()).as("the force-released hold").isFalse();
      // Stays valid for longer than any event of the old grant takes to arrive.
      await().during(millis(500)).atMost(millis(3_000)).until(fresh::isValid);
      assertThat(fresh.release()).isTrue();
    }
  }
}
