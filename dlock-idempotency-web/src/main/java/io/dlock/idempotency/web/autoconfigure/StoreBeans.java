package io.dlock.idempotency.web.autoconfigure;

import io.dlock.spring.support.BeanChoice;
import java.util.List;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The application's beans the {@code Idempotency-Key} records can be kept in (a Spring Data {@code
 * LettuceConnectionFactory} with {@code dlock-redis}, a {@code DataSource}), and which one is
 * chosen: the one {@code dlock.idempotency.store-bean} names, else the only one there is; by the
 * lock starter's rule ({@link BeanChoice}, shared with it). Unlike the lock client, the filter
 * backs off when the application has no such bean, so several beans of one kind that injection
 * cannot choose between (no {@code @Primary}) fail the start-up too, rather than leaving the
 * application silently without the filter.
 */
final class StoreBeans {
  static final String PROPERTY = "dlock.idempotency.store-bean";

  static final BeanChoice.Kind LETTUCE_CONNECTION_FACTORY =
      new BeanChoice.Kind(
          "lettuce-connection-factory",
          "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
          // The Redis stores run their scripts through dlock-redis's loader, on Lettuce.
          List.of("io.dlock.redis.script.RedisScript", "io.lettuce.core.RedisClient"));
  static final BeanChoice.Kind DATA_SOURCE =
      new BeanChoice.Kind("data-source", "javax.sql.DataSource", List.of());

  static final BeanChoice CHOICE =
      BeanChoice.of(
              PROPERTY,
              "keep its Idempotency-Key records in",
              "define a DedupRecords bean",
              List.of(LETTUCE_CONNECTION_FACTORY, DATA_SOURCE))
          .severalOfAKindAreAmbiguous();

  private StoreBeans() {}

  /** Matches when the records are to be kept in a bean of {@link #kind()}. */
  abstract static class Chosen extends BeanChoice.Chosen {
    @Override
    protected BeanChoice choice() {
      return CHOICE;
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

  /** Matches when there are beans to keep the records in, but none can be chosen. */
  static final class Unresolved extends SpringBootCondition implements ConfigurationCondition {
    @Override
    public ConfigurationPhase getConfigurationPhase() {
      return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(
        ConditionContext context, AnnotatedTypeMetadata metadata) {
      ConfigurableListableBeanFactory beans = context.getBeanFactory();
      if (beans == null) {
        return ConditionOutcome.noMatch("no bean factory");
      }
      String problem;
      try {
        problem = CHOICE.problem(beans, context.getClassLoader(), context.getEnvironment());
      } catch (IllegalStateException e) {
        problem = e.getMessage(); // a bad property value: the bean reports it
      }
      return problem == null
          ? ConditionOutcome.noMatch("a bean to keep the records in is chosen, or there is none")
          : ConditionOutcome.match(problem);
    }
  }
}
