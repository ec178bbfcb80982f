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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Session and row modes: the server ends a holder's session while the holder lives (a restart, an
 * administrator's kill) and so frees the lock on the server, while the holder still trusts its
 * lease until it next hears from the database. No other client may be granted the lock before the
 * holder has stopped trusting it: the grant's record in {@code <table>_held}, whose lease end the
 * database's clock keeps at every renewal, holds the lock for the server until the holder is told
 * (and clears it) or the recorded lease ends.
 *
 * <p>The holder's heartbeat is set far apart (a minute), so that nothing but the record can stop
 * the second grant: before the record was checked, the stranger was granted at once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServerEndedSessionTest {
  private static final Duration LEASE = Duration.ofSeconds(2);

  @ParameterizedTest(name = "{0} {1}, renewed {2}")
  @CsvSource({
    "postgres, SESSION, true",
    "postgres, SESSION, false",
    "postgres, ROW, true",
    "postgres, ROW, false",
    "mariadb, SESSION, true",
    "mariadb, SESSION, false",
    "mariadb, ROW, true",
    "mariadb, ROW, false"
  })
  void aLockWhoseSessionTheServerEndedIsNotGrantedAgainWhileItsHolderTrustsIt(
      String database, JdbcLockMode mode, boolean renewed) throws Exception {
    String url = url(database);
    JdbcLockSettings quiet =
        TestDatabases.settings(url, mode).withHeartbeatInterval(Duration.ofMinutes(1));
    String name = "ended-" + mode + "-" + UUID.randomUUID();
    LockOptions options =
        renewed
            ? LockOptions.defaults().withRenewedLease(LEASE)
            : LockOptions.defaults().withFixedLease(LEASE);
    try (LockClient holder = JdbcLocks.newClient(quiet, LockClientOptions.defaults());
        LockClient stranger = JdbcLocks.newClient(quiet, LockClientOptions.defaults())) {
      Lease held = holder.lock(name, options).tryAcquire().orElseThrow();
      if (renewed) {
        // Past the grant's own lease: only its renewals speak for it now.
        // Time passing past the first lease, not synchronization: renewals must carry the lease.
        Thread.sleep(LEASE.plusMillis(500).toMillis());
        assertThat(held.isValid()).isTrue();
      }
      HeldSessions.end(url, HeldSessions.idOf(url, name));

      Optional<Lease> second = stranger.lock(name).tryAcquire();
      boolean holderTrusted = held.isValid();
      second.ifPresent(Lease::release);
      assertThat(second)
          .as("a second grant while the first holder reads valid (%s)", holderTrusted)
          .matches(s -> s.isEmpty() || !holderTrusted);

      // The holder's lease ends (renewed: its renewal finds the session gone, and says so);
      // then the lock is free again, within the recorded lease. Asked in a loop: a waiter
      // re-checks once per heartbeat interval (a minute here), which is not what is tested.
      AtomicReference<Lease> next = new AtomicReference<>();
      await()
          .atMost(millis(10_000))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                Optional<Lease> granted = stranger.lock(name).tryAcquire();
                granted.ifPresent(
                    lease -> assertThat(held.isValid()).as("holder valid at the grant").isFalse());
                granted.ifPresent(next::set);
                return granted.isPresent();
              });
      assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(next.get().release()).isTrue();
    }
  }

  /**
   * The holds of one owner id share one grant and one record: a hold with a shorter lease (here a
   * fixed 300 ms re-entry of a 6 s renewed hold) must not move the record's lease end back, or the
   * record ends while the longer hold still trusts the lock (session mode wrote {@code now + lease}
   * of whichever hold spoke last; found by review).
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"postgres, SESSION", "postgres, ROW", "mariadb, SESSION", "mariadb, ROW"})
  void aShorterHoldOfTheSameOwnerIdNeverCutsTheRecordShort(String database, JdbcLockMode mode)
      throws Exception {
    String url = url(database);
    JdbcLockSettings quiet =
        TestDatabases.settings(url, mode).withHeartbeatInterval(Duration.ofMinutes(1));
    String name = "shorter-" + mode + "-" + UUID.randomUUID();
    try (LockClient holder = JdbcLocks.newClient(quiet, LockClientOptions.defaults());
        LockClient stranger = JdbcLocks.newClient(quiet, LockClientOptions.defaults())) {
      LockOptions owner = LockOptions.defaults().withOwnerId("x");
      Lease longer =
          holder
              .lock(name, owner.withRenewedLease(Duration.ofSeconds(6)))
              .tryAcquire()
              .orElseThrow();
      Lease shorter =
          holder
              .lock(name, owner.withFixedLease(Duration.ofMillis(300)))
              .tryAcquire()
              .orElseThrow();
      assertThat(shorter.fencingToken()).isEqualTo(longer.fencingToken());
      HeldSessions.end(url, HeldSessions.idOf(url, name));
      // Time passing, not synchronization: the shorter hold's 300 ms lease must be over.
      Thread.sleep(500);

      Optional<Lease> second = stranger.lock(name).tryAcquire();
      boolean longerTrusted = longer.isValid();
      second.ifPresent(Lease::release);
      assertThat(second)
          .as("a second grant while the longer hold reads valid (%s)", longerTrusted)
          .matches(s -> s.isEmpty() || !longerTrusted);
    }
  }

  private static String url(String database) {
    if (database.equals("postgres")) {
      return TestDatabases.postgres();
    }
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    return TestDatabases.mariaDb().orElseThrow();
  }
}
