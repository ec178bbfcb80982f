package io.dlock.idempotency.web.autoconfigure;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.IdempotencyStoreException;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import io.dlock.idempotency.redis.RedisIdempotency;
import io.dlock.idempotency.redis.RedisIdempotencySettings;
import io.dlock.idempotency.web.IdempotencyKeyFilter;
import io.dlock.spring.support.LettuceServer;
import io.lettuce.core.SslOptions;
import io.lettuce.core.resource.ClientResources;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.web.servlet.ConditionalOnMissingFilterBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The {@link DedupRecords} of the {@code Idempotency-Key} filter, made from the application's own
 * beans when it defines none, imported by {@link IdempotencyKeyAutoConfiguration} in this order: on
 * the server of its {@code LettuceConnectionFactory}, in its {@code DataSource}, or, with beans to
 * choose from and no choice, a failed start-up naming them ({@link StoreBeans}). Nothing is made
 * when the application registers the filter itself. What is made here is closed with the context;
 * the application's factory and {@code DataSource} are only used, never closed.
 */
abstract class DedupRecordsConfigurations {

  private DedupRecordsConfigurations() {}

  /**
   * Records on the server of the application's {@link LettuceConnectionFactory}: its server,
   * database, credentials and TLS, on its Lettuce resources ({@link LettuceServer}, as the lock
   * starter reads it), over a connection of the records' own.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
        "io.dlock.redis.script.RedisScript",
        "io.lettuce.core.RedisClient"
      })
  @ConditionalOnMissingBean(DedupRecords.class)
  @ConditionalOnMissingFilterBean(IdempotencyKeyFilter.class)
  @Conditional(StoreBeans.OnLettuceConnectionFactory.class)
  static class OnLettuceConnectionFactory {
    static final String REMEDY =
        "Define a DedupRecords bean (over RedisIdempotency.connect(...), for example), or keep the"
            + " records in the application's DataSource with "
            + StoreBeans.PROPERTY
            + "="
            + StoreBeans.DATA_SOURCE.value();

    @Bean(destroyMethod = "close")
    IdempotencyRedisConnection dlockIdempotencyRedisConnection(
        LettuceConnectionFactory connectionFactory, IdempotencyKeyProperties properties) {
      return new IdempotencyRedisConnection(
          RedisIdempotency.connect(settings(connectionFactory, properties)));
    }

    @Bean(IdempotencyKeyAutoConfiguration.RECORDS_BEAN)
    DedupRecords dlockDedupRecords(
        IdempotencyRedisConnection connection, IdempotencyKeyProperties properties) {
      return properties.toRecords(connection.redis().dedupStore());
    }

    static RedisIdempotencySettings settings(
        LettuceConnectionFactory factory, IdempotencyKeyProperties properties) {
      LettuceServer server = LettuceServer.of(factory, REMEDY);
      if (server.isCluster()) {
        throw new IllegalStateException(
            "dlock cannot keep its Idempotency-Key records on the application's"
                + " LettuceConnectionFactory: it reaches a Redis Cluster ("
                + server.uri()
                + "), on which the Redis idempotency stores do not run. "
                + REMEDY);
      }
      RedisIdempotencySettings settings = RedisIdempotencySettings.of(server.uri());
      char[] password = server.password();
      if (password != null) {
        settings = settings.withCredentials(server.username(), password);
      }
      ClientResources resources = server.clientResources();
      if (resources != null) {
        settings = settings.withClientResources(resources);
      }
      SslOptions ssl = server.sslOptions();
      if (ssl != null) {
        settings = settings.withSslOptions(ssl);
      }
      String keyPrefix = properties.getRedis().getKeyPrefix();
      if (keyPrefix != null) {
        try {
          settings = settings.withKeyPrefix(keyPrefix);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("dlock.idempotency.redis: " + e.getMessage(), e);
        }
      }
      return settings;
    }
  }

  /**
   * Records in the application's {@link DataSource}: the table {@code dlock.idempotency.jdbc
   * .table-prefix + "dedup"}, created at start with {@code dlock.idempotency.jdbc.create-schema},
   * otherwise checked at start.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingBean(DedupRecords.class)
  @ConditionalOnMissingFilterBean(IdempotencyKeyFilter.class)
  @Conditional(StoreBeans.OnDataSource.class)
  static class OnDataSource {
    @Bean(IdempotencyKeyAutoConfiguration.RECORDS_BEAN)
    DedupRecords dlockDedupRecords(DataSource dataSource, IdempotencyKeyProperties properties) {
      JdbcIdempotencySettings settings = properties.toJdbcSettings();
      JdbcIdempotency jdbc = JdbcIdempotency.on(dataSource, settings);
      try {
        if (settings.createSchema()) {
          jdbc.createSchema();
        } else {
          jdbc.checkDedupTable();
        }
      } catch (IdempotencyStoreException e) {
        // Say it in the application's terms: its property, not the library's Java call.
        throw new IllegalStateException(
            "dlock cannot keep its Idempotency-Key records in the application's DataSource: set"
                + " dlock.idempotency.jdbc.create-schema=true to create the table "
                + settings.dedupTable()
                + " at start (the database user needs the right to), or create it with the DDL"
                + " in docs/idempotency.md. "
                + e.getMessage(),
            e);
      }
      return properties.toRecords(jdbc.dedupStore());
    }
  }

  /** Beans to keep the records in, but none chosen: the start-up fails, naming the choice. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingBean(DedupRecords.class)
  @ConditionalOnMissingFilterBean(IdempotencyKeyFilter.class)
  @Conditional(StoreBeans.Unresolved.class)
  static class NoChoice {
    @Bean
    DedupRecords dlockDedupRecords(ConfigurableListableBeanFactory beans, Environment environment) {
      String problem = StoreBeans.CHOICE.problem(beans, beans.getBeanClassLoader(), environment);
      throw new IllegalStateException(
          problem != null
              ? problem
              : "dlock could not choose where to keep its Idempotency-Key records: set "
                  + StoreBeans.PROPERTY
                  + ", or define a DedupRecords bean");
    }
  }
}
