package io.dlock.spring.autoconfigure;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * The start-up checks of the {@code dlock.*} properties, active also with {@code
 * dlock.enabled=false} (where {@link DlockAutoConfiguration} is not): unknown properties fail the
 * start-up ({@link UnknownPropertiesCheck}), and a switched-off starter says so ({@link
 * DisabledLockingWarning}).
 */
@AutoConfiguration(before = DlockAutoConfiguration.class)
public class DlockChecksAutoConfiguration {

  /** Static: a post-processor, run before any bean (a client among them) is created. */
  @Bean
  static UnknownPropertiesCheck dlockUnknownPropertiesCheck(ConfigurableEnvironment environment) {
    return new UnknownPropertiesCheck(environment);
  }

  /** The warning of {@code dlock.enabled=false}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBooleanProperty(name = "dlock.enabled", havingValue = false)
  static class Disabled {
    @Bean
    DisabledLockingWarning dlockDisabledWarning(ConfigurableListableBeanFactory beans) {
      return new DisabledLockingWarning(beans);
    }
  }
}
