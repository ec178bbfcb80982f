package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Session and row modes: the database's own bound on a holding session (its idle timeout) follows
 * the longest open hold of the grant, not the first one. A hold with a short lease, then a hold of
 * the same owner id with a long lease on the same connection; the short one is released; the long
 * one renews rarely (or never, with a fixed lease). The session must stay alive and the lock taken
 * as long as the long hold reads valid.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OwnerIdLongerLeaseTest {
  /** The first hold's lease: its idle limit on the server was this plus heartbeat and 1 s. */
  private static final Duration SHORT = Duration.ofSeconds(1);

  private static final Duration LONG = Duration.ofSeconds(30);

  @Test
  void postgresSession_aLongerRenewedHoldKeepsTheSessionPastTheFirstHoldsIdleLimit()
      throws Exception {
    longerHoldKeepsTheLock(TestDatabases.postgres(), JdbcLockMode.SESSION, true);
  }

  @Test
  void postgresRow_aLongerFixedHoldKeepsTheSessionPastTheFirstHoldsIdleLimit() throws Exception {
    longerHoldKeepsTheLock(TestDatabases.postgres(), JdbcLockMode.ROW, false);
  }

  @Test
  void mariaDbSession_aLongerFixedHoldKeepsTheSessionPastTheFirstHoldsIdleLimit() throws Exception {
    longerHoldKeepsTheLock(mariaDb(), JdbcLockMode.SESSION, false);
  }

  @Test
  void mariaDbRow_aLongerRenewedHoldKeepsTheSessionPastTheFirstHoldsIdleLimit() throws Exception {
    longerHoldKeepsTheLock(mariaDb(), JdbcLockMode.ROW, true);
  }

  private static String mariaDb() {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    return TestDatabases.mariaDb().orElseThrow();
  }

  private static void longerHoldKeepsTheLock(String url, JdbcLockMode mode, boolean renewed)
      throws Exception {
    JdbcLockSettings settings = TestDatabases.settings(url, mode);
    String name = "longer-" + mode + "-" + UUID.randomUUID();
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient stranger = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      Lease first =
          client
              .lock(name, LockOptions.defaults().withOwnerId("x").withRenewedLease(SHORT))
              .tryAcquire()
              .orElseThrow();
      LockOptions longer = LockOptions.defaults().withOwnerId("x");
      longer = renewed ? longer.withRenewedLease(LONG) : longer.withFixedLease(LONG);
      Lease second = client.lock(name, longer).tryAcquire().orElseThrow();
      assertThat(second.fencingToken()).isEqualTo(first.fencingToken());
      // Let the first hold renew at least once (which switched the heartbeat off before the fix).
      await().pollDelay(SHORT).atMost(millis(5_000)).until(first::isValid);
      first.release();

      // The first hold's idle limit (lease + heartbeat + 1 s) and then some: the lock must stay
      // taken throughout, as long as the second hold reads valid.
      Duration pastOldIdleLimit =
          SHORT.plus(settings.heartbeatInterval()).plusSeconds(1).plus(millis(2_000));
      long released = System.nanoTime();
      AtomicReference<String> violation = new AtomicReference<>();
      await()
          .during(pastOldIdleLimit)
          .atMost(pastOldIdleLimit.plus(millis(10_000)))
          .failFast(() -> assertThat(violation.get()).isNull())
          .until(
              () -> {
                boolean valid = second.isValid();
                if (!strangerIsRefused(stranger, name)) {
                  violation.set(
                      "another client was granted "
                          + Duration.ofNanos(System.nanoTime() - released).toMillis()
                          + " ms after the first release while the second hold read valid="
                          + valid);
                }
                return valid;
              });
      assertThat(violation.get()).isNull();
      assertThat(second.release()).isTrue();
    }
  }

  private static boolean strangerIsRefused(LockClient stranger, String name) {
    Optional<Lease> taken = stranger.lock(name).tryAcquire();
    taken.ifPresent(Lease::release);
    return taken.isEmpty();
  }
}
