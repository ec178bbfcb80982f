package io.dlock.redis;

import io.dlock.testkit.ServerControl;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The Redis servers the tests run against: one started by the tests on a free loopback port, and
 * the external one named by {@code DLOCK_TEST_REDIS_URI}, if any.
 */
final class RedisTestServers {
  static final String EXTERNAL_URI_VARIABLE = "DLOCK_TEST_REDIS_URI";

  private static @Nullable RedisServerProcess embedded;

  private RedisTestServers() {}

  /** The server started by the tests, shared by all test classes of this JVM. */
  static synchronized RedisServerProcess embedded() {
    // synchronized: guards one-time start-up in tests, not I/O on a hot path.
    if (embedded == null || !embedded.isRunning()) {
      if (embedded != null) {
        embedded.restart();
      } else {
        embedded = RedisServerProcess.start();
        Runtime.getRuntime().addShutdownHook(new Thread(embedded::close));
      }
    }
    return embedded;
  }

  static Optional<String> externalUri() {
    String uri = System.getenv(EXTERNAL_URI_VARIABLE);
    return uri == null || uri.isBlank() ? Optional.empty() : Optional.of(uri);
  }

  static ServerControl control(RedisServerProcess server) {
    return new ServerControl() {
      @Override
      public void stop() {
        server.kill();
      }

      @Override
      public void start() {
        server.restart();
      }
    };
  }

  /** Runs {@code DEL} of the lock key of {@code name}, as an operator would. */
  static void deleteLock(String uri, String name) {
    RedisClient client = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      connection.sync().del(new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX).lock(name));
    } finally {
      client.shutdown();
    }
  }
}
