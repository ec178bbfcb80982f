package io.dlock.idempotency.web.autoconfigure;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.web.IdempotencyKeyFilter;
import java.util.List;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.web.servlet.ConditionalOnMissingFilterBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Registers the {@link IdempotencyKeyFilter} in a servlet web application, configured by {@code
 * dlock.idempotency.*} ({@link IdempotencyKeyProperties}), on the {@link DedupRecords} (the store:
 * Redis or JDBC, with its retention) of, in order: the application's own {@code DedupRecords} bean;
 * else records it makes on the server of the application's Spring Data {@code
 * LettuceConnectionFactory} or in its {@code DataSource}, whichever is the one there is (the lock
 * starter's rule; {@code dlock.idempotency.store-bean} chooses when there are several, and the
 * start-up fails naming them until it does). Without any of them, there is no filter. Backs off
 * when the application registers the filter itself, or sets {@code
 * dlock.idempotency.enabled=false}.
 *
 * <p>After the data source's and Redis's auto-configuration, so that their beans are seen before
 * choosing among them.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration"
    })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(IdempotencyKeyFilter.class)
@ConditionalOnBooleanProperty(name = "dlock.idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyKeyProperties.class)
@Import({
  DedupRecordsConfigurations.OnLettuceConnectionFactory.class,
  DedupRecordsConfigurations.OnDataSource.class,
  DedupRecordsConfigurations.NoChoice.class
})
public class IdempotencyKeyAutoConfiguration {

  /** The name of the records this auto-configuration makes, when it makes them. */
  static final String RECORDS_BEAN = "dlockDedupRecords";

  @Bean
  @ConditionalOnBean(DedupRecords.class)
  @ConditionalOnMissingFilterBean(IdempotencyKeyFilter.class)
  FilterRegistrationBean<IdempotencyKeyFilter> dlockIdempotencyKeyFilter(
      DedupRecords records,
      IdempotencyKeyProperties properties,
      ConfigurableListableBeanFactory beans) {
    List<String> ignored = properties.recordProperties();
    if (!beans.containsBeanDefinition(RECORDS_BEAN) && !ignored.isEmpty()) {
      // Refused rather than ignored: a retention set here would not be the one in force.
      throw new IllegalStateException(
          String.join(", ", ignored)
              + " apply only to the records dlock makes over the application's"
              + " LettuceConnectionFactory or DataSource, not to the application's own DedupRecords"
              + " bean: set them on that bean (withRetention, withInProgressTimeout, its store's"
              + " settings), or remove the properties");
    }
    FilterRegistrationBean<IdempotencyKeyFilter> registration =
        new FilterRegistrationBean<>(new IdempotencyKeyFilter(records, properties.toSettings()));
    registration.setUrlPatterns(properties.getUrlPatterns());
    registration.setOrder(properties.getOrder());
    registration.setName("dlockIdempotencyKeyFilter");
    return registration;
  }
}
