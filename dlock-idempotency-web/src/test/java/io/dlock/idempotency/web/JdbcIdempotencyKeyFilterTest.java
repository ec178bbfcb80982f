package io.dlock.idempotency.web;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import java.time.Duration;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/** The filter with its records in a database table (H2 in memory). */
@SpringBootTest(
    classes = {OrdersApp.class, JdbcIdempotencyKeyFilterTest.JdbcStore.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class JdbcIdempotencyKeyFilterTest extends IdempotencyKeyFilterTest {

  @TestConfiguration(proxyBeanMethods = false)
  static class JdbcStore {
    @Bean
    FilterRegistrationBean<IdempotencyKeyFilter> idempotencyKeyFilter() {
      JdbcDataSource dataSource = new JdbcDataSource();
      dataSource.setURL("jdbc:h2:mem:idempotency-web;DB_CLOSE_DELAY=-1");
      JdbcIdempotency db =
          JdbcIdempotency.on(dataSource, JdbcIdempotencySettings.defaults().withCreateSchema(true));
      DedupRecords records =
          DedupRecords.on(db.dedupStore())
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
