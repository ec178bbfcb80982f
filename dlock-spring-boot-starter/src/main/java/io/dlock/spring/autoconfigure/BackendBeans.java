package io.dlock.spring.autoconfigure;

import io.dlock.spring.support.BeanChoice;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.env.Environment;

/**
 * The application's beans a client can be built on (a {@code CuratorFramework}, a Spring Data
 * {@code LettuceConnectionFactory}, a {@code DataSource}, each with its dlock module), and which
 * one is chosen: the one named by {@code dlock.backend-bean}, else the only one there is. With more
 * than one and no choice, none is: the start-up fails naming them, because picking one silently
 * could put two versions of an application on different lock servers during a rolling upgrade, and
 * both into the critical section. The rule is {@link BeanChoice}'s, shared with the {@code
 * Idempotency-Key} records of {@code dlock-idempotency-web}.
 */
final class BackendBeans {
  static final String PROPERTY = "dlock.backend-bean";

  static final BeanChoice.Kind CURATOR_FRAMEWORK =
      new BeanChoice.Kind(
          "curator-framework",
          "org.apache.curator.framework.CuratorFramework",
          List.of("io.dlock.zookeeper.ZooKeeperLocks"));
  static final BeanChoice.Kind LETTUCE_CONNECTION_FACTORY =
      new BeanChoice.Kind(
          "lettuce-connection-factory",
          "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
          List.of("io.dlock.redis.RedisLocks"));
  static final BeanChoice.Kind DATA_SOURCE =
      new BeanChoice.Kind(
          "data-source", "javax.sql.DataSource", List.of("io.dlock.jdbc.JdbcLocks"));

  static final BeanChoice CHOICE =
      BeanChoice.of(
          PROPERTY,
          "lock on",
          "set dlock.backend",
          List.of(CURATOR_FRAMEWORK, LETTUCE_CONNECTION_FACTORY, DATA_SOURCE));

  private BackendBeans() {}

  /** Why no client was built on a bean, for the start-up failure; null if none could be. */
  static @Nullable String ambiguity(
      ConfigurableListableBeanFactory beans,
      @Nullable ClassLoader loader,
      Environment environment) {
    return CHOICE.problem(beans, loader, environment);
  }

  /** Matches when the client is to be built on a bean of {@link #kind()}. */
  abstract static class Chosen extends BeanChoice.Chosen {
    @Override
    protected BeanChoice choice() {
      return CHOICE;
    }
  }

  static final class OnCuratorFramework extends Chosen {
    @Override
    protected BeanChoice.Kind kind() {
      return CURATOR_FRAMEWORK;
    }
  }

  static final class OnLettuceConnectionFactory extends Chosen {
    @Override
    protected BeanChoice.Kind kind() {
      return LETTUCE_CONNECTION_FACTORY;
    }
  }

  static final class OnDataSource extends Chosen {
    @Override
    protected BeanChoice.Kind kind() {
      return DATA_SOURCE;
    }
  }
}
