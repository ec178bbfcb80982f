package io.dlock.redis;

import io.dlock.spi.LockBackend;
import io.dlock.testkit.LockContractTest;
import io.dlock.testkit.ServerControl;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import java.util.Optional;

/** The contract suite against a redis-server the test starts on a free loopback port. */
class RedisLockContractTest extends LockContractTest {

  @Override
  protected LockBackend newBackend() {
    return RedisLockBackend.connect(RedisLockSettings.of(RedisTestServers.embedded().uri()));
  }

  @Override
  protected LockBackend newBackendForUnreachableServer() {
    return RedisLockBackend.connect(
        RedisLockSettings.of("redis://127.0.0.1:" + RedisServerProcess.freePort())
            .withCommandTimeout(Duration.ofSeconds(1)));
  }

  @Override
  protected void deleteLockOnServer(String name) {
    RedisTestServers.deleteLock(RedisTestServers.embedded().uri(), name);
  }

  @Override
  protected Optional<ServerControl> serverControl() {
    return Optional.of(RedisTestServers.control(RedisTestServers.embedded()));
  }
}
