package io.dlock.spring.autoconfigure;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockEventListener;
import io.dlock.jdbc.JdbcLockSettings;
import io.dlock.jdbc.JdbcLocks;
import io.dlock.jdbc.JdbcSchemaException;
import io.dlock.redis.RedisBackendProvider;
import io.dlock.redis.RedisLockSettings;
import io.dlock.redis.RedisLocks;
import io.dlock.zookeeper.ZooKeeperLocks;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The ways to get a {@link LockClient}, imported by {@link DlockAutoConfiguration} in this order;
 * the first that applies wins. Of the application's beans, only the one {@link BackendBeans}
 * chooses applies. Not nested in a configuration class, so that Spring does not process them in
 * reflection order.
 *
 * <p>Every client made here reports to the application's {@link LockEventListener} beans (the
 * starter's Micrometer metrics among them), so that all its locks are observed, also those taken
 * directly through the client.
 */
abstract class LockClientConfigurations {

  private LockClientConfigurations() {}

  /** The options of {@code properties}, with the listener beans installed. */
  static LockClientOptions options(
      DlockProperties properties, ObjectProvider<LockEventListener> listeners) {
    return properties
        .toClientOptions()
        .withEventListener(LockEventListener.allOf(listeners.orderedStream().toList()));
  }

  /**
   * The client {@code connect} makes: at once with {@code dlock.fail-fast}, else, if the server
   * does not answer within the operation timeout, one that starts without it and connects when it
   * comes ({@link LockClients#connectLater}).
   */
  static LockClient connect(
      DlockProperties properties,
      String backendName,
      String target,
      Supplier<LockClient> connect,
      LockClientOptions options) {
    return properties.isFailFast()
        ? connect.get()
        : LockClients.connectLater(backendName, target, connect, options);
  }

  /** The client for {@code dlock.backend}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "dlock", name = "backend")
  static class UriClient {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LockClient dlockLockClient(
        DlockProperties properties, ObjectProvider<LockEventListener> listeners) {
      String uri = Objects.requireNonNull(properties.getBackend());
      // LockClients says where it locks (the URI without secrets) as every caller of it.
      Map<String, String> backendProperties =
          BackendPropertyNames.forUri(uri, properties.getBackendProperties());
      LockClientOptions options = options(properties, listeners);
      return properties.isFailFast()
          ? LockClients.connect(uri, backendProperties, options)
          : LockClients.connectLater(uri, backendProperties, options);
    }
  }

  /** A client over the application's started {@link CuratorFramework} (dlock-zookeeper). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({ZooKeeperLocks.class, CuratorFramework.class})
  @Conditional(BackendBeans.OnCuratorFramework.class)
  static class CuratorClient {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LockClient dlockLockClient(
        CuratorFramework curator,
        DlockProperties properties,
        ObjectProvider<LockEventListener> listeners) {
      BackendPropertyNames.requireNone(
          properties.getBackendProperties(),
          "CuratorFramework",
          "the CuratorFramework's own settings and dlock.zookeeper.root-path");
      String connectString = curator.getZookeeperClient().getCurrentConnectionString();
      LockTargets.curator(connectString);
      LockClientOptions options = options(properties, listeners);
      return connect(
          properties,
          "zookeeper",
          "ZooKeeper " + connectString,
          () -> ZooKeeperLocks.newClient(curator, properties.getZookeeper().getRootPath(), options),
          options);
    }
  }

  /**
   * A client on the Redis server of the application's {@link LettuceConnectionFactory}
   * (dlock-redis): same server, database, credentials and TLS, on the factory's Lettuce resources,
   * with dlock's own two connections ({@link RedisConnectionFactorySettings} says why).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({RedisLocks.class, LettuceConnectionFactory.class})
  @Conditional(BackendBeans.OnLettuceConnectionFactory.class)
  static class RedisConnectionFactoryClient {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LockClient dlockLockClient(
        LettuceConnectionFactory connectionFactory,
        DlockProperties properties,
        ObjectProvider<LockEventListener> listeners,
        Environment environment) {
      RedisLockSettings settings =
          RedisConnectionFactorySettings.of(
              connectionFactory,
              BackendPropertyNames.forBackend(
                  new RedisBackendProvider().acceptedProperties("redis://"),
                  properties.getBackendProperties()));
      LockTargets.lettuce(settings.redactedUri(), environment);
      LockClientOptions options = options(properties, listeners);
      return connect(
          properties,
          "redis",
          settings.redactedUri(),
          () -> RedisLocks.newClient(settings, options),
          options);
    }
  }

  /** A client over the application's {@link DataSource}: lease rows (dlock-jdbc). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({JdbcLocks.class, DataSource.class})
  @Conditional(BackendBeans.OnDataSource.class)
  static class DataSourceClient {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LockClient dlockLockClient(
        DataSource dataSource,
        DlockProperties properties,
        ObjectProvider<LockEventListener> listeners) {
      BackendPropertyNames.requireNone(
          properties.getBackendProperties(),
          "DataSource",
          "the DataSource's own settings and dlock.jdbc.*");
      JdbcLockSettings settings;
      try {
        settings =
            JdbcLockSettings.of(dataSource)
                .withTable(properties.getJdbc().getTable())
                .withCreateSchema(properties.getJdbc().isCreateSchema());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("dlock.jdbc.table: " + e.getMessage(), e);
      }
      String target = LockTargets.dataSource(dataSource);
      LockClientOptions options = options(properties, listeners);
      return connect(properties, "jdbc", target, () -> jdbcClient(settings, options), options);
    }

    private static LockClient jdbcClient(JdbcLockSettings settings, LockClientOptions options) {
      try {
        return JdbcLocks.newClient(settings, options);
      } catch (JdbcSchemaException e) {
        if (!e.fixedByCreatingTheSchema()) {
          throw e;
        }
        // Say it in the application's terms: its property, not the library's Java call.
        throw new IllegalStateException(
            "dlock's lock table is missing in the application's DataSource: set"
                + " dlock.jdbc.create-schema=true to create it at start (the database user needs"
                + " the right to), or create it with the DDL named below. "
                + e.getMessage(),
            e);
      }
    }
  }

  /** Fails the start-up with a useful message when no client was configured. */
  @Configuration(proxyBeanMethods = false)
  static class NoBackend {
    @Bean
    @ConditionalOnMissingBean
    LockClient dlockMissingBackend(ConfigurableListableBeanFactory beans, Environment environment) {
      String ambiguity = BackendBeans.ambiguity(beans, beans.getBeanClassLoader(), environment);
      if (ambiguity != null) {
        throw new IllegalStateException(ambiguity);
      }
      throw new IllegalStateException(
          "dlock has no backend: set dlock.backend (redis://host:6379, zk://host:2181/root,"
              + " jdbc:...) with the backend module on the class path, give the application a"
              + " CuratorFramework, LettuceConnectionFactory or DataSource bean with the matching"
              + " module, or define a LockClient bean; dlock.enabled=false switches the starter"
              + " off");
    }
  }
}
