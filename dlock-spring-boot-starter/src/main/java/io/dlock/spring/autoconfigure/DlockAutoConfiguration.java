package io.dlock.spring.autoconfigure;

import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.spring.DistributedLockAdvisor;
import io.dlock.spring.DistributedLockInterceptor;
import io.dlock.spring.LockAcquirer;
import io.dlock.spring.LockedMethods;
import io.dlock.spring.integration.DlockLockRegistry;
import io.dlock.spring.metrics.LockMetrics;
import io.dlock.spring.metrics.MicrometerLockMetrics;
import io.dlock.spring.shedlock.DlockLockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Configures dlock from the {@code dlock.*} properties ({@link DlockProperties}): the {@link
 * LockClient}, the {@code @DistributedLock} advisor, and the acquirer with its metrics. Every bean
 * backs off when the application defines its own of the same type.
 *
 * <p>The client comes from, in order: a {@link LockClient} bean of the application; {@code
 * dlock.backend} through {@link LockClients#connect} (the command line's call, so URIs mean the
 * same in both); otherwise the start-up fails with a message saying what to set.
 */
@AutoConfiguration(
    afterName = "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration")
@ConditionalOnBooleanProperty(name = "dlock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DlockProperties.class)
@Import({
  LockClientConfigurations.UriClient.class,
  LockClientConfigurations.CuratorClient.class,
  LockClientConfigurations.DataSourceClient.class,
  LockClientConfigurations.NoBackend.class,
  DlockAutoConfiguration.MicrometerConfiguration.class,
  DlockAutoConfiguration.IntegrationConfiguration.class,
  DlockAutoConfiguration.ShedLockConfiguration.class,
  DlockAutoConfiguration.AdvisorConfiguration.class
})
public class DlockAutoConfiguration {

  /** The order of the {@code @DistributedLock} advisor: outside a default-ordered transaction. */
  public static final int ADVISOR_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

  @Bean
  @ConditionalOnMissingBean
  LockAcquirer dlockLockAcquirer(
      LockClient client, ObjectProvider<LockMetrics> metrics, DlockProperties properties) {
    return new LockAcquirer(
        client, metrics.getIfAvailable(() -> LockMetrics.NONE), properties.getKeyPrefix());
  }

  /**
   * Makes sure an auto-proxy creator exists even with {@code spring.aop.auto=false}: an annotation
   * that is silently not applied would be a lock that is silently not taken. Same as
   * {@code @EnableTransactionManagement} does.
   */
  static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {
    @Override
    public void registerBeanDefinitions(
        AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
      AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
    }
  }

  /** Micrometer metrics, when Micrometer is on the class path and a registry is defined. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class MicrometerConfiguration {
    @Bean
    @ConditionalOnMissingBean
    LockMetrics dlockLockMetrics(ObjectProvider<MeterRegistry> registry, LockClient client) {
      MeterRegistry meters = registry.getIfUnique();
      return meters == null ? LockMetrics.NONE : new MicrometerLockMetrics(meters, client);
    }
  }

  /** A Spring Integration lock registry, when Spring Integration is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(LockRegistry.class)
  static class IntegrationConfiguration {
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    DlockLockRegistry dlockLockRegistry(LockClient client, DlockProperties properties) {
      return new DlockLockRegistry(client, properties.getKeyPrefix(), properties.toLockOptions());
    }
  }

  /** A ShedLock lock provider, when ShedLock is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(LockProvider.class)
  static class ShedLockConfiguration {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockProvider.class)
    DlockLockProvider dlockShedLockProvider(LockAcquirer acquirer) {
      return new DlockLockProvider(acquirer);
    }
  }

  /**
   * The advisor that applies {@code @DistributedLock}; infrastructure, like the transaction one.
   */
  @Configuration(proxyBeanMethods = false)
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  @Import(AutoProxyRegistrar.class)
  static class AdvisorConfiguration {
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static LockedMethods dlockLockedMethods(
        ObjectProvider<DlockProperties> properties, ConfigurableListableBeanFactory beanFactory) {
      return new LockedMethods(
          properties::getObject, new EmbeddedValueResolver(beanFactory), beanFactory);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static DistributedLockAdvisor dlockLockAdvisor(
        LockedMethods methods,
        ObjectProvider<LockAcquirer> acquirer,
        ObjectProvider<DlockProperties> properties) {
      DistributedLockAdvisor advisor =
          new DistributedLockAdvisor(
              methods,
              new DistributedLockInterceptor(
                  methods,
                  acquirer::getObject,
                  () -> properties.getObject().isReleaseAfterTransaction()));
      advisor.setOrder(ADVISOR_ORDER);
      return advisor;
    }
  }
}
