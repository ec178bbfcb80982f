package io.dlock.idempotency.web;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.redis.RedisIdempotency;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/** The filter with its records on a real redis-server. */
@SpringBootTest(
    classes = {OrdersApp.class, RedisIdempotencyKeyFilterTest.RedisStore.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RedisIdempotencyKeyFilterTest extends IdempotencyKeyFilterTest {

  @TestConfiguration(proxyBeanMethods = false)
  static class RedisStore {
    @Bean(destroyMethod = "close")
    RedisServerProcess redisServer() {
      return RedisServerProcess.start();
    }

    @Bean(destroyMethod = "close")
    RedisIdempotency redisIdempotency(RedisServerProcess server) {
      return RedisIdempotency.connect(server.uri());
    }

    @Bean
    FilterRegistrationBean<IdempotencyKeyFilter> idempotencyKeyFilter(RedisIdempotency redis) {
      DedupRecords records =
          DedupRecords.on(redis.dedupStore())
              .withInProgressTimeout(Duration.ofSeconds(30))
              .withRetention(Duration.ofHours(1));
      return new FilterRegistrationBean<>(
          new IdempotencyKeyFilter(
              records,
              IdempotencyKeySettings.defaults()
                  .withCallerResolver(CallerResolver.header("X-Caller"))));
    }
  }
}
