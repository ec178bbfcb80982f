package io.dlock.redis;

import io.dlock.spi.LockBackend;
import io.dlock.testkit.LockContractTest;
import io.dlock.testkit.ServerControl;
import io.dlock.testkit.server.RedisServerProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The contract suite against Redlock over 3 and over 5 independent redis-server masters. */
class RedlockLockContractTest {

  static List<RedisServerProcess> startMasters(int n) {
    List<RedisServerProcess> masters = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      masters.add(RedisServerProcess.start());
    }
    return masters;
  }

  static RedlockSettings settings(List<RedisServerProcess> masters) {
    // 50 ms suits a quiet network; a shared 2-core test machine needs slack (scaled).
    return RedlockSettings.of(masters.stream().map(RedisServerProcess::uri).toList())
        .withNodeTimeout(io.dlock.testkit.TestTiming.millis(500));
  }

  abstract static class Base extends LockContractTest {
    abstract List<RedisServerProcess> masters();

    @Override
    protected LockBackend newBackend() {
      return RedlockLockBackend.connect(settings(masters()));
    }

    @Override
    protected LockBackend newBackendForUnreachableServer() {
      return RedlockLockBackend.connect(
          RedlockSettings.of(
              List.of(
                  "redis://127.0.0.1:" + RedisServerProcess.freePort(),
                  "redis://127.0.0.1:" + RedisServerProcess.freePort(),
                  "redis://127.0.0.1:" + RedisServerProcess.freePort())));
    }

    @Override
    protected void deleteLockOnServer(String name) {
      for (RedisServerProcess master : masters()) {
        master.command("DEL", "dlock:{" + name + "}");
      }
    }

    @Override
    protected Optional<ServerControl> serverControl() {
      return Optional.of(
          new ServerControl() {
            @Override
            public void stop() {
              masters().forEach(RedisServerProcess::kill);
            }

            @Override
            public void start() {
              masters().forEach(RedisServerProcess::restart);
            }
          });
    }
  }

  @Nested
  class ThreeMasters extends Base {
    @Override
    List<RedisServerProcess> masters() {
      return three;
    }
  }

  @Nested
  class FiveMasters extends Base {
    @Override
    List<RedisServerProcess> masters() {
      return five;
    }
  }

  @Test
  void manyLeasesAreRenewedWithAShortNodeTimeout() throws Exception {
    RedlockRenewalBatches.manyLeasesAreRenewedWithAShortNodeTimeout(five);
  }

  @Test
  void aSilentMastersTimedOutRenewalsAreCancelled() throws Exception {
    RedlockRenewalBatches.aSilentMastersTimedOutRenewalsAreCancelled(five);
  }

  static List<RedisServerProcess> three;
  static List<RedisServerProcess> five;

  @BeforeAll
  static void start() {
    three = startMasters(3);
    five = startMasters(5);
  }

  @AfterAll
  static void stop() {
    three.forEach(RedisServerProcess::close);
    five.forEach(RedisServerProcess::close);
  }
}
