package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A backend loads its scripts into the server's cache when it connects, so that their first calls
 * on a server that never saw them cost no {@code NOSCRIPT} round trip (a failed call, a load and a
 * second call). Found by the benchmark: the first renewal of a client counted two requests.
 */
class RedisScriptPreloadTest {

  @Test
  void theFirstAcquireRenewAndReleaseOfLocksAndPermitsOnAFreshServerMeetNoNoscript()
      throws Exception {
    try (RedisServerProcess server = RedisServerProcess.start();
        RedisLockBackend backend = RedisLockBackend.connect(RedisLockSettings.of(server.uri()))) {
      backend.start(new BackendContext(MonotonicClock.SYSTEM, Duration.ofSeconds(5)));
      LockOwner owner = LockOwner.ofGrant("preload");
      Duration lease = Duration.ofSeconds(30);
      AcquireResult granted = backend.tryAcquire("first", owner, lease).get(5, TimeUnit.SECONDS);
      assertThat(granted).isInstanceOf(AcquireResult.Granted.class);
      long token = ((AcquireResult.Granted) granted).fencingToken();
      assertThat(
              backend
                  .renew(List.of(new HeldLease("first", owner, token, lease)))
                  .get(5, TimeUnit.SECONDS))
          .isEmpty();
      assertThat(backend.release("first", owner, token).get(5, TimeUnit.SECONDS))
          .isEqualTo(ReleaseResult.RELEASED);

      // Permit scripts load before the first acquisition of permits, not when the client starts.
      PermitStore permits = backend.permits().orElseThrow();
      AcquireResult permit =
          permits.tryAcquire("first", 2, 1, owner, lease).get(5, TimeUnit.SECONDS);
      assertThat(permit).isInstanceOf(AcquireResult.Granted.class);
      long permitToken = ((AcquireResult.Granted) permit).fencingToken();
      assertThat(
              permits
                  .renew(List.of(new HeldLease("first", owner, permitToken, lease)))
                  .get(5, TimeUnit.SECONDS))
          .isEmpty();
      assertThat(permits.release("first", owner, permitToken).get(5, TimeUnit.SECONDS))
          .isEqualTo(ReleaseResult.RELEASED);

      RedisClient raw = RedisClient.create(server.uri());
      try (StatefulRedisConnection<String, String> admin = raw.connect()) {
        assertThat(admin.sync().info("errorstats")).doesNotContain("NOSCRIPT");
        assertThat(admin.sync().info("commandstats"))
            .contains("cmdstat_script|load:calls=12,")
            .contains("cmdstat_evalsha:calls=6,");
      } finally {
        raw.shutdown();
      }
    }
  }
}
