package io.dlock.spring.autoconfigure;

import io.dlock.LockClient;
import io.dlock.spring.LockNamePatterns;
import io.dlock.spring.actuate.LockBackendHealthIndicator;
import io.dlock.spring.actuate.LocksEndpoint;
import io.dlock.spring.actuate.SemaphoresEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code locks} endpoint and the {@code dlock} health indicator, when Spring Boot Actuator is
 * on the class path. Expose the endpoint as any other: {@code
 * management.endpoints.web.exposure.include=health,locks}; {@code management.health.dlock.enabled=
 * false} switches the indicator off.
 */
@AutoConfiguration(after = DlockAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, HealthIndicator.class})
@ConditionalOnBean(LockClient.class)
public class DlockActuatorAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint(endpoint = LocksEndpoint.class)
  LocksEndpoint dlockLocksEndpoint(LockClient client) {
    return new LocksEndpoint(client);
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint(endpoint = SemaphoresEndpoint.class)
  SemaphoresEndpoint dlockSemaphoresEndpoint(LockClient client) {
    return new SemaphoresEndpoint(client);
  }

  @Bean(name = "dlockHealthIndicator")
  @ConditionalOnMissingBean(name = "dlockHealthIndicator")
  @ConditionalOnEnabledHealthIndicator("dlock")
  LockBackendHealthIndicator dlockHealthIndicator(
      LockClient client, LockNamePatterns names, DlockProperties properties) {
    // Built (and so tagged) as a lock without key, whose pattern is the health lock's name.
    return new LockBackendHealthIndicator(
        client, names.lockName(properties.getHealthLockName(), null));
  }
}
