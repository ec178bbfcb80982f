package io.dlock.idempotency.web.autoconfigure;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.web.IdempotencyKeyFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.web.servlet.ConditionalOnMissingFilterBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * Registers the {@link IdempotencyKeyFilter} in a servlet web application that defines a {@link
 * DedupRecords} bean (the store: Redis or JDBC, with its retention), configured by {@code
 * dlock.idempotency.*} ({@link IdempotencyKeyProperties}). Backs off when the application registers
 * the filter itself, or sets {@code dlock.idempotency.enabled=false}.
 */
@AutoConfiguration
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(IdempotencyKeyFilter.class)
@ConditionalOnBean(DedupRecords.class)
@ConditionalOnBooleanProperty(name = "dlock.idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyKeyProperties.class)
public class IdempotencyKeyAutoConfiguration {

  @Bean
  @ConditionalOnMissingFilterBean(IdempotencyKeyFilter.class)
  FilterRegistrationBean<IdempotencyKeyFilter> dlockIdempotencyKeyFilter(
      DedupRecords records, IdempotencyKeyProperties properties) {
    FilterRegistrationBean<IdempotencyKeyFilter> registration =
        new FilterRegistrationBean<>(new IdempotencyKeyFilter(records, properties.toSettings()));
    registration.setUrlPatterns(properties.getUrlPatterns());
    registration.setOrder(properties.getOrder());
    registration.setName("dlockIdempotencyKeyFilter");
    return registration;
  }
}
