package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 14, item 1, in the connection-bound modes, where an owner id shares its grant within one
 * client: a grant ended on the server behind its holder's back (an operator's forced release) and
 * granted again at once to the same owner id; the old hold's late release and renewal must reach
 * only their own grant, never the newer one, which a stranger must then still find taken.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OwnerIdLateReleaseTest {

  static List<Arguments> databasesAndModes() {
    List<Arguments> cases = new ArrayList<>();
    for (JdbcLockMode mode : List.of(JdbcLockMode.SESSION, JdbcLockMode.ROW)) {
      cases.add(Arguments.of("postgres", TestDatabases.postgres(), mode));
      TestDatabases.mariaDb().ifPresent(url -> cases.add(Arguments.of("mariadb", url, mode)));
    }
    return cases;
  }

  @ParameterizedTest(name = "{0} {2}")
  @MethodSource("databasesAndModes")
  void aLostOwnerIdGrantsLateReleaseAndRenewalNeverReachItsNewerGrant(
      String database, String url, JdbcLockMode mode) throws Exception {
    Assumptions.assumeTrue(url != null, database + " is not available");
    // A heartbeat too rare to notice the forced release first: the old hold still reads valid
    // when the owner id is granted again, and its release comes late.
    JdbcLockSettings settings =
        TestDatabases.settings(url, mode).withHeartbeatInterval(Duration.ofMinutes(1));
    String name = "late-release-" + UUID.randomUUID();
    LockOptions options =
        LockOptions.defaults().withOwnerId("team-1").withRenewedLease(Duration.ofSeconds(3));
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient admin = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient stranger = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      Lease old = client.lock(name, options).tryAcquire().orElseThrow();
      assertThat(admin.forceRelease(name)).isPresent();
      Lease fresh =
          client
              .lock(name, options)
              .tryAcquire()
              .orElseThrow(() -> new AssertionError("the owner id was not granted the free lock"));
      assertThat(fresh.fencingToken()).isGreaterThan(old.fencingToken());

      assertThat(old.release()).as("the lost grant's late release").isFalse();
      // Longer than a renewal interval (1 s): the old grant's renewals, had they run on, would
      // have been answered by now; the newer grant is neither freed nor lost.
      await()
          .during(millis(1_500))
          .atMost(millis(5_000))
          .untilAsserted(
              () -> {
                assertThat(fresh.isValid()).as("the newer grant").isTrue();
                assertThat(stranger.lock(name).tryAcquire().map(Lease::release))
                    .as("a stranger's try while the newer grant holds")
                    .isEmpty();
              });
      assertThat(fresh.release()).isTrue();
      assertThat(stranger.lock(name).tryAcquire().map(Lease::release)).contains(true);
    }
  }
}
