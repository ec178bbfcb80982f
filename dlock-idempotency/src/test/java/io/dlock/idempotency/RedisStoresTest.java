package io.dlock.idempotency;

import io.dlock.idempotency.redis.RedisIdempotency;
import io.dlock.idempotency.redis.RedisIdempotencySettings;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The contract on a real redis-server started on a free loopback port. */
class RedisStoresTest extends IdempotencyStoreContractTest {
  private static RedisServerProcess server;
  private static RedisIdempotency redis;
  private static final List<RedisIdempotency> opened = new ArrayList<>();

  @BeforeAll
  static void startServer() {
    server = RedisServerProcess.start();
    redis = RedisIdempotency.connect(server.uri());
  }

  @AfterAll
  static void stopServer() {
    opened.forEach(RedisIdempotency::close);
    if (redis != null) {
      redis.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Override
  TokenStore tokenStore(Duration retention) {
    RedisIdempotency connection =
        RedisIdempotency.connect(
            RedisIdempotencySettings.of(server.uri()).withTokenRetention(retention));
    opened.add(connection);
    return connection.tokenStore();
  }

  @Override
  DedupStore dedupStore() {
    return redis.dedupStore();
  }

  @Override
  List<String> crashingClaimantArgs() {
    return List.of("redis", server.uri());
  }
}
