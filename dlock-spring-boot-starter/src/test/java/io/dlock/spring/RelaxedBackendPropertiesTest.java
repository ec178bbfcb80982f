package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockChecksAutoConfiguration;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code dlock.backend-properties.key-prefix}, as Spring users write it, reaches the Redis backend:
 * the lock's key is written under that prefix, not under the default {@code dlock:} (which it was
 * before, without a word, because the backend reads {@code keyPrefix}). Through {@code
 * dlock.backend} and through the application's {@code LettuceConnectionFactory}.
 */
class RelaxedBackendPropertiesTest {
  private static RedisClient redis;
  private static StatefulRedisConnection<String, String> connection;

  private final String prefix = "app2-" + UUID.randomUUID() + ":";
  private final String lockName = "relaxed-" + UUID.randomUUID();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DlockChecksAutoConfiguration.class, DlockAutoConfiguration.class));

  @BeforeAll
  static void connect() {
    redis = RedisClient.create(TestRedis.uri());
    connection = redis.connect();
  }

  @AfterAll
  static void close() {
    connection.close();
    redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }

  @Test
  void kebabCaseKeyPrefixReachesTheBackendOfTheUri() {
    runner
        .withPropertyValues(
            "dlock.backend=" + TestRedis.uri(), "dlock.backend-properties.key-prefix=" + prefix)
        .run(this::assertLockKeyUnderPrefix);
  }

  @Test
  void kebabCaseKeyPrefixReachesTheBackendOverTheConnectionFactory() {
    runner
        .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class))
        .withPropertyValues(
            "spring.data.redis.url=" + TestRedis.uri(),
            "dlock.backend-properties.key-prefix=" + prefix,
            "dlock.backend-properties.command-timeout=PT3S")
        .run(this::assertLockKeyUnderPrefix);
  }

  @Test
  void aMisspelledBackendPropertyFailsTheStart() {
    runner
        .withPropertyValues(
            "dlock.backend=" + TestRedis.uri(), "dlock.backend-properties.key-prefx=" + prefix)
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("dlock.backend-properties.key-prefx is not read by the")
                  .hasMessageContaining("did you mean key-prefix (keyPrefix)?");
            });
  }

  private void assertLockKeyUnderPrefix(AssertableApplicationContext context) {
    assertThat(context).hasNotFailed();
    LockClient client = context.getBean(LockClient.class);
    try (Lease lease = client.lock(lockName).acquire(Duration.ZERO)) {
      assertThat(lease.isValid()).isTrue();
      // RedisKeys: prefix + "{" + name + "}".
      assertThat(connection.sync().exists(prefix + "{" + lockName + "}")).isEqualTo(1L);
      assertThat(connection.sync().exists("dlock:{" + lockName + "}")).isZero();
    }
  }
}
