package io.dlock.spring.autoconfigure;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * The application's beans a client can be built on (a {@code CuratorFramework}, a Spring Data
 * {@code LettuceConnectionFactory}, a {@code DataSource}, each with its dlock module), and which
 * one is chosen: the one named by {@code dlock.backend-bean}, else the only one there is. With more
 * than one and no choice, none is: the start-up fails naming them, because picking one silently
 * could put two versions of an application on different lock servers during a rolling upgrade, and
 * both into the critical section.
 */
final class BackendBeans {
  static final String PROPERTY = "dlock.backend-bean";

  private BackendBeans() {}

  /** A kind of bean a client can be built on. */
  enum Kind {
    CURATOR_FRAMEWORK(
        "org.apache.curator.framework.CuratorFramework", "io.dlock.zookeeper.ZooKeeperLocks"),
    LETTUCE_CONNECTION_FACTORY(
        "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
        "io.dlock.redis.RedisLocks"),
    DATA_SOURCE("javax.sql.DataSource", "io.dlock.jdbc.JdbcLocks");

    final String beanType;
    final String module;

    Kind(String beanType, String module) {
      this.beanType = beanType;
      this.module = module;
    }

    /** The property value that chooses it: {@code curator-framework}, ... */
    String value() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    String typeName() {
      return ClassUtils.getShortName(beanType);
    }
  }

  /** The kinds whose module is on the class path and of which the application has one bean. */
  static List<Kind> candidates(
      ConfigurableListableBeanFactory beans, @Nullable ClassLoader loader) {
    List<Kind> found = new ArrayList<>();
    for (Kind kind : Kind.values()) {
      if (!ClassUtils.isPresent(kind.beanType, loader)
          || !ClassUtils.isPresent(kind.module, loader)) {
        continue;
      }
      Class<?> type = ClassUtils.resolveClassName(kind.beanType, loader);
      if (hasSingleCandidate(beans, type)) {
        found.add(kind);
      }
    }
    return found;
  }

  /**
   * Whether injection by {@code type} resolves to one bean, as
   * {@code @ConditionalOnSingleCandidate} counts: in this context and its ancestors, without
   * scoped-proxy targets and beans that are not (default) autowire candidates; of several, the one
   * primary, or the one that is not a fallback.
   */
  private static boolean hasSingleCandidate(ConfigurableListableBeanFactory beans, Class<?> type) {
    List<BeanDefinition> candidates = new ArrayList<>();
    int unknown = 0;
    for (String name :
        BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beans, type, true, false)) {
      if (ScopedProxyUtils.isScopedTarget(name)) {
        continue;
      }
      if (!beans.containsBeanDefinition(name)) {
        unknown++; // an ancestor's bean, or one registered as an instance: it counts
        continue;
      }
      BeanDefinition definition = beans.getBeanDefinition(name);
      if (!definition.isAutowireCandidate()
          || (definition instanceof AbstractBeanDefinition d && !d.isDefaultCandidate())) {
        continue;
      }
      candidates.add(definition);
    }
    int all = candidates.size() + unknown;
    if (all == 1) {
      return true;
    }
    if (candidates.stream().filter(BeanDefinition::isPrimary).count() == 1) {
      return true;
    }
    return unknown == 0 && candidates.stream().filter(d -> !d.isFallback()).count() == 1;
  }

  /**
   * The kind {@code dlock.backend-bean} names, or null if unset.
   *
   * @throws IllegalStateException naming the property if the value is not a kind
   */
  static @Nullable Kind chosen(Environment environment) {
    String value = environment.getProperty(PROPERTY);
    if (value == null || value.isBlank()) {
      return null;
    }
    for (Kind kind : Kind.values()) {
      if (kind.value().equalsIgnoreCase(value.trim())) {
        return kind;
      }
    }
    throw new IllegalStateException(
        PROPERTY + " must be one of " + values() + ", but was '" + value + "'");
  }

  /** Why no client was built on a bean, for the start-up failure; null if none could be. */
  static @Nullable String ambiguity(
      ConfigurableListableBeanFactory beans,
      @Nullable ClassLoader loader,
      Environment environment) {
    List<Kind> candidates = candidates(beans, loader);
    Kind chosen = chosen(environment);
    if (chosen != null) {
      return candidates.contains(chosen)
          ? null
          : PROPERTY
              + "="
              + chosen.value()
              + ", but the application has no single "
              + chosen.typeName()
              + " bean, or its dlock module is not on the class path";
    }
    if (candidates.size() < 2) {
      return null;
    }
    return "dlock found more than one bean it could lock on ("
        + candidates.stream().map(Kind::typeName).collect(Collectors.joining(", "))
        + "): set "
        + PROPERTY
        + " to one of "
        + candidates.stream().map(Kind::value).collect(Collectors.joining(", "))
        + ", or set dlock.backend";
  }

  private static String values() {
    return Arrays.stream(Kind.values()).map(Kind::value).collect(Collectors.joining(", "));
  }

  /** Matches when the client is to be built on a bean of {@link #kind()}. */
  abstract static class Chosen extends SpringBootCondition implements ConfigurationCondition {
    abstract Kind kind();

    /** Once the bean definitions are known (the auto-configured ones too), as Spring's own. */
    @Override
    public ConfigurationPhase getConfigurationPhase() {
      return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(
        ConditionContext context, AnnotatedTypeMetadata metadata) {
      Kind kind = kind();
      Kind chosen = chosen(context.getEnvironment());
      ConfigurableListableBeanFactory beans = context.getBeanFactory();
      if (beans == null) {
        return ConditionOutcome.noMatch("no bean factory");
      }
      List<Kind> candidates = candidates(beans, context.getClassLoader());
      if (!candidates.contains(kind)) {
        return ConditionOutcome.noMatch("no single " + kind.typeName() + " bean with its module");
      }
      if (chosen != null) {
        return chosen == kind
            ? ConditionOutcome.match(PROPERTY + "=" + kind.value())
            : ConditionOutcome.noMatch(PROPERTY + "=" + chosen.value());
      }
      return candidates.size() == 1
          ? ConditionOutcome.match("the only bean to lock on: " + kind.typeName())
          : ConditionOutcome.noMatch("more than one bean to lock on, none chosen");
    }
  }

  static final class OnCuratorFramework extends Chosen {
    @Override
    Kind kind() {
      return Kind.CURATOR_FRAMEWORK;
    }
  }

  static final class OnLettuceConnectionFactory extends Chosen {
    @Override
    Kind kind() {
      return Kind.LETTUCE_CONNECTION_FACTORY;
    }
  }

  static final class OnDataSource extends Chosen {
    @Override
    Kind kind() {
      return Kind.DATA_SOURCE;
    }
  }
}
