package io.dlock.spring.autoconfigure;

import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockEventListener;
import io.dlock.LockNames;
import io.dlock.micrometer.MicrometerLockMetrics;
import io.dlock.spring.LeaderOnlyAdvisor;
import io.dlock.spring.LockAcquirer;
import io.dlock.spring.LockNamePatterns;
import io.dlock.spring.LockedMethodAdvisor;
import io.dlock.spring.LockedMethodInterceptor;
import io.dlock.spring.LockedMethods;
import io.dlock.spring.election.DlockLeaderElection;
import io.dlock.spring.integration.DlockLockRegistry;
import io.dlock.spring.shedlock.DlockLockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
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
 * LockClient}, the {@code @Locked} advisor, the acquirer and the metrics. Every bean backs off when
 * the application defines its own of the same type.
 *
 * <p>The client comes from, in order: a {@link LockClient} bean of the application; {@code
 * dlock.backend} through {@link LockClients#connect} (the command line's call, so URIs mean the
 * same in both); the application's single {@code CuratorFramework}, Spring Data {@code
 * LettuceConnectionFactory} or {@code DataSource} bean, in that order, when the matching backend
 * module is on the class path; otherwise the start-up fails with a message saying what to set. A
 * client the starter makes reports to the {@link io.dlock.LockEventListener} beans (the metrics);
 * one of the application gets them only if the application sets them in its options.
 *
 * <p>With {@code dlock.election.name}, the application's candidacy in that leader election ({@link
 * DlockLeaderElection}), for {@code @LeaderOnly} methods and leadership events.
 *
 * <p>After the meter registries' auto-configuration, so that the metrics see the registry.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
      // Spring Cloud Zookeeper's CuratorFramework: seen before choosing among the beans.
      "org.springframework.cloud.zookeeper.ZookeeperAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnBooleanProperty(name = "dlock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DlockProperties.class)
@Import({
  LockClientConfigurations.UriClient.class,
  LockClientConfigurations.CuratorClient.class,
  LockClientConfigurations.RedisConnectionFactoryClient.class,
  LockClientConfigurations.DataSourceClient.class,
  LockClientConfigurations.NoBackend.class,
  DlockAutoConfiguration.MicrometerConfiguration.class,
  DlockAutoConfiguration.IntegrationConfiguration.class,
  DlockAutoConfiguration.ShedLockConfiguration.class,
  DlockAutoConfiguration.ElectionConfiguration.class,
  DlockAutoConfiguration.AdvisorConfiguration.class
})
public class DlockAutoConfiguration {

  /** The order of the {@code @Locked} advisor: outside a default-ordered transaction. */
  public static final int ADVISOR_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

  /** The order of the {@code @LeaderOnly} advisor: outside {@code @Locked}. */
  public static final int LEADER_ONLY_ADVISOR_ORDER = ADVISOR_ORDER - 1;

  @Bean
  @ConditionalOnMissingBean
  LockNamePatterns dlockLockNamePatterns(DlockProperties properties) {
    return new LockNamePatterns(properties.getKeyPrefix());
  }

  @Bean
  @ConditionalOnMissingBean
  LockAcquirer dlockLockAcquirer(LockClient client, LockNamePatterns names) {
    return new LockAcquirer(client, names);
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

  /**
   * Micrometer metrics, when Micrometer is on the class path and a registry is defined: a listener
   * of the client's lock events, which the client configurations install; an application that makes
   * its own client sets this bean in its options.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      value = MeterRegistry.class,
      name = "io.dlock.micrometer.MicrometerLockMetrics") // unless the application excluded it
  @ConditionalOnSingleCandidate(MeterRegistry.class)
  static class MicrometerConfiguration {
    @Bean
    @ConditionalOnMissingBean
    MicrometerLockMetrics dlockLockMetrics(
        MeterRegistry registry, LockNamePatterns names, ObjectProvider<LockClient> client) {
      // The client is made after its listener: its backend is asked at the first event. A
      // @Locked method's first attempt is a probe; its wait counts on its own, so the probe's
      // "held" answer is no failure.
      return MicrometerLockMetrics.builder(registry)
          .lockTag(names::patternOf)
          .backendName(() -> client.getObject().backendName())
          .countFailureWhen(
              (name, failure) ->
                  failure != LockEventListener.AcquireFailure.TIMEOUT
                      || !LockAcquirer.isFirstAttempt(name))
          .build();
    }

    /** The {@code dlock.locks.held} gauge, once the client exists. */
    @Bean
    SmartInitializingSingleton dlockLocksHeldGauge(
        ObjectProvider<MicrometerLockMetrics> metrics, ObjectProvider<LockClient> client) {
      return () -> metrics.getObject().bindTo(client.getObject());
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
    DlockLockProvider dlockShedLockProvider(LockAcquirer acquirer, DlockProperties properties) {
      // The server's lease outlasts any answer the client waits for: its operation timeout.
      return new DlockLockProvider(acquirer, properties.getOperationTimeout());
    }
  }

  /**
   * The starter's leader election, when {@code dlock.election.name} is set: the property is the
   * opt-in (an application's own {@code LeaderElection} beans are its own, and do not replace it).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty("dlock.election.name")
  static class ElectionConfiguration {
    @Bean
    DlockLeaderElection dlockLeaderElection(
        LockClient client,
        DlockProperties properties,
        LockNamePatterns names,
        ApplicationEventPublisher publisher) {
      DlockProperties.Election election = properties.getElection();
      String name = Objects.requireNonNullElse(election.getName(), "");
      try {
        LockNames.requireValid(properties.getKeyPrefix() + name);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("dlock.election.name: " + e.getMessage(), e);
      }
      // Through the patterns, so that the metrics tag the election's lock with its name.
      return new DlockLeaderElection(
          client, names.lockName(name, null), election.toLockOptions(), publisher);
    }
  }

  /** The advisor that applies {@code @Locked}; infrastructure, like the transaction one. */
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
    static LockedMethodAdvisor dlockLockAdvisor(
        LockedMethods methods,
        ObjectProvider<LockAcquirer> acquirer,
        ObjectProvider<DlockProperties> properties) {
      LockedMethodAdvisor advisor =
          new LockedMethodAdvisor(
              methods,
              new LockedMethodInterceptor(
                  methods,
                  acquirer::getObject,
                  () -> properties.getObject().isReleaseAfterTransaction()));
      advisor.setOrder(ADVISOR_ORDER);
      return advisor;
    }

    /**
     * The advisor that applies {@code @LeaderOnly}, with or without an election: without one, a
     * {@code @LeaderOnly} method fails the start-up rather than running on every instance.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static LeaderOnlyAdvisor dlockLeaderOnlyAdvisor(
        ObjectProvider<DlockLeaderElection> election, ConfigurableListableBeanFactory beanFactory) {
      LeaderOnlyAdvisor advisor =
          new LeaderOnlyAdvisor(
              // Bean definitions only: asked while beans are being proxied.
              () ->
                  beanFactory.getBeanNamesForType(DlockLeaderElection.class, true, false).length
                      > 0,
              election::getObject);
      advisor.setOrder(LEADER_ONLY_ADVISOR_ORDER);
      return advisor;
    }
  }
}
