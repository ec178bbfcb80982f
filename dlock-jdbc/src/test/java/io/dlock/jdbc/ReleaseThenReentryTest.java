package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every mode: the core undoes a grant whose request saw its session lost and then tries again with
 * the same per-grant owner. The retry must never re-enter the grant whose release was asked for but
 * has not run yet: it would be handed out, and then unlocked under its holder.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReleaseThenReentryTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @Test
  void postgresSessionRetryNeverReentersAGrantWhoseReleaseIsPending() throws Exception {
    retryNeverReentersAGrantWhoseReleaseIsPending(TestDatabases.postgres(), JdbcLockMode.SESSION);
  }

  @Test
  void h2LeaseRowRetryNeverReentersAGrantWhoseReleaseIsPending() throws Exception {
    retryNeverReentersAGrantWhoseReleaseIsPending(TestDatabases.H2_URL, JdbcLockMode.LEASE_ROW);
  }

  @Test
  void postgresLeaseRowRetryNeverReentersAGrantWhoseReleaseIsPending() throws Exception {
    retryNeverReentersAGrantWhoseReleaseIsPending(TestDatabases.postgres(), JdbcLockMode.LEASE_ROW);
  }

  @Test
  void h2RowRetryNeverReentersAGrantWhoseReleaseIsPending() throws Exception {
    retryNeverReentersAGrantWhoseReleaseIsPending(TestDatabases.H2_URL, JdbcLockMode.ROW);
  }

  private static void retryNeverReentersAGrantWhoseReleaseIsPending(String url, JdbcLockMode mode)
      throws Exception {
    try (JdbcLockBackend backend = JdbcLockBackend.connect(TestDatabases.settings(url, mode));
        JdbcLockBackend other = JdbcLockBackend.connect(TestDatabases.settings(url, mode))) {
      for (int round = 0; round < 40; round++) {
        String name = "release-reentry-" + UUID.randomUUID();
        LockOwner owner = LockOwner.ofGrant(UUID.randomUUID().toString());
        AcquireResult.Granted first =
            (AcquireResult.Granted)
                backend.tryAcquire(name, owner, LEASE).get(10, TimeUnit.SECONDS);
        CompletableFuture<ReleaseResult> release =
            backend.release(name, owner, first.fencingToken());
        AcquireResult retry = backend.tryAcquire(name, owner, LEASE).get(10, TimeUnit.SECONDS);
        assertThat(release.get(10, TimeUnit.SECONDS)).isEqualTo(ReleaseResult.RELEASED);
        if (retry instanceof AcquireResult.Granted again) {
          assertThat(again.fencingToken())
              .as("round %d: the retry re-entered the grant being released", round)
              .isNotEqualTo(first.fencingToken());
          assertThat(
                  other
                      .tryAcquire(name, LockOwner.ofGrant("other"), LEASE)
                      .get(10, TimeUnit.SECONDS))
              .as("round %d: the retry's grant is held", round)
              .isInstanceOf(AcquireResult.Held.class);
          backend.release(name, owner, again.fencingToken()).get(10, TimeUnit.SECONDS);
        }
      }
    }
  }
}
