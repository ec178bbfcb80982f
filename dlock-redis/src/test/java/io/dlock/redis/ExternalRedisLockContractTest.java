package io.dlock.redis;

import io.dlock.spi.LockBackend;
import io.dlock.testkit.LockContractTest;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The contract suite against the external Redis named by {@code DLOCK_TEST_REDIS_URI} (for example
 * {@code redis://127.0.0.1:6379}); skipped when the variable is not set. The external server is
 * never stopped: tests that need that skip with a reason, or cut the client's link instead.
 */
@EnabledIfEnvironmentVariable(
    named = RedisTestServers.EXTERNAL_URI_VARIABLE,
    matches = ".+",
    disabledReason = "DLOCK_TEST_REDIS_URI is not set: no external Redis to test against")
class ExternalRedisLockContractTest extends LockContractTest {

  private static String uri() {
    return RedisTestServers.externalUri().orElseThrow();
  }

  @Override
  protected LockBackend newBackend() {
    return RedisLockBackend.connect(RedisLockSettings.of(uri()));
  }

  @Override
  protected LockBackend newBackendForUnreachableServer() {
    return RedisLockBackend.connect(
        RedisLockSettings.of("redis://127.0.0.1:" + RedisServerProcess.freePort())
            .withCommandTimeout(Duration.ofSeconds(1)));
  }

  @Override
  protected void deleteLockOnServer(String name) {
    RedisTestServers.deleteLock(uri(), name);
  }
}
