package io.dlock.spring.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.ClassUtils;

/**
 * Fails the start-up on a {@code dlock.*} property that nothing binds, naming it, where it was set
 * and the closest known property: a misspelled {@code dlock.backnd} would otherwise fall back to
 * another backend, and {@code dlock.wait-tme} leave the default wait, without a word.
 *
 * <p>Known are the properties of {@link DlockProperties}, of {@code dlock-idempotency-web}'s
 * properties when it is on the class path, and of any other {@code @ConfigurationProperties} bean
 * whose prefix is under {@code dlock}. Runs before any bean is created, so that a misspelled
 * backend does not connect to the wrong server first. As Spring's own {@code ignoreUnknownFields =
 * false}, it leaves environment variables and JVM system properties alone: they are shared with
 * other programs ({@code DLOCK_BACKEND} of the command line, test settings).
 */
final class UnknownPropertiesCheck implements BeanFactoryPostProcessor {
  static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("dlock");

  /** Properties of other dlock modules: prefix, class, module. */
  private static final String[][] MODULES = {
    {
      "dlock.idempotency",
      "io.dlock.idempotency.web.autoconfigure.IdempotencyKeyProperties",
      "dlock-idempotency-web"
    }
  };

  private static final Set<String> NOT_CHECKED =
      Set.of(
          StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
          StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);

  private final ConfigurableEnvironment environment;

  UnknownPropertiesCheck(ConfigurableEnvironment environment) {
    this.environment = environment;
  }

  @Override
  public void postProcessBeanFactory(ConfigurableListableBeanFactory beans) {
    KnownProperties known = new KnownProperties().add("dlock", DlockProperties.class);
    List<String[]> absentModules = new ArrayList<>();
    for (String[] module : MODULES) {
      if (ClassUtils.isPresent(module[1], beans.getBeanClassLoader())) {
        known.add(module[0], ClassUtils.resolveClassName(module[1], beans.getBeanClassLoader()));
      } else {
        absentModules.add(module);
      }
    }
    addPropertiesBeans(beans, known);
    List<String> problems = new ArrayList<>();
    for (PropertySource<?> source : environment.getPropertySources()) {
      if (NOT_CHECKED.contains(source.getName())
          || ConfigurationPropertySources.isAttachedConfigurationPropertySource(source)) {
        continue;
      }
      ConfigurationPropertySource adapted = ConfigurationPropertySource.from(source);
      if (!(adapted instanceof IterableConfigurationPropertySource iterable)) {
        continue;
      }
      iterable.stream()
          .filter(PREFIX::isAncestorOf)
          .filter(name -> !known.contains(name))
          .forEach(name -> problems.add(problem(name, iterable, source, known, absentModules)));
    }
    if (!problems.isEmpty()) {
      throw new IllegalStateException(
          "Unknown dlock properties fail the start-up rather than being ignored (fix the name or"
              + " remove the property): "
              + String.join("; ", new LinkedHashSet<>(problems)));
    }
  }

  /** Other {@code @ConfigurationProperties} beans under {@code dlock}, such as a module's own. */
  private static void addPropertiesBeans(
      ConfigurableListableBeanFactory beans, KnownProperties to) {
    for (String name : beans.getBeanDefinitionNames()) {
      BeanDefinition definition = beans.getBeanDefinition(name);
      if (definition.getRole() == BeanDefinition.ROLE_INFRASTRUCTURE) {
        continue;
      }
      Class<?> type = typeOf(beans, name);
      if (type == null) {
        continue;
      }
      MergedAnnotation<ConfigurationProperties> annotation =
          MergedAnnotations.from(type, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY)
              .get(ConfigurationProperties.class);
      if (!annotation.isPresent()
          && definition instanceof AnnotatedBeanDefinition annotated
          && annotated.getFactoryMethodMetadata() != null) {
        annotation =
            annotated
                .getFactoryMethodMetadata()
                .getAnnotations()
                .get(ConfigurationProperties.class);
      }
      if (!annotation.isPresent()) {
        continue;
      }
      String prefix = annotation.getString("prefix");
      ConfigurationPropertyName parsed = ConfigurationPropertyName.ofIfValid(prefix);
      if (parsed != null && (PREFIX.equals(parsed) || PREFIX.isAncestorOf(parsed))) {
        to.add(prefix, type);
      }
    }
  }

  /**
   * The bean's type without creating anything, or null if it cannot be told: a definition whose
   * class is missing is not this check's to fail on (its own creation will say so).
   */
  static @Nullable Class<?> typeOf(ConfigurableListableBeanFactory beans, String name) {
    try {
      return beans.getType(name, false);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  private static String problem(
      ConfigurationPropertyName name,
      ConfigurationPropertySource adapted,
      PropertySource<?> source,
      KnownProperties known,
      List<String[]> absentModules) {
    String where = " (" + origin(name, adapted, source) + ")";
    for (String[] module : absentModules) {
      ConfigurationPropertyName prefix = ConfigurationPropertyName.of(module[0]);
      if (prefix.isAncestorOf(name)) {
        return name
            + where
            + " is read by "
            + module[2]
            + ", which is not on the class path: add it, or remove the property";
      }
    }
    String closest = known.closest(name);
    return "unknown property "
        + name
        + where
        + (closest == null ? "" : "; did you mean " + closest + "?");
  }

  private static String origin(
      ConfigurationPropertyName name,
      ConfigurationPropertySource adapted,
      PropertySource<?> source) {
    ConfigurationProperty property = adapted.getConfigurationProperty(name);
    @Nullable Object origin = property == null ? null : property.getOrigin();
    return origin != null ? origin.toString() : source.getName();
  }
}
