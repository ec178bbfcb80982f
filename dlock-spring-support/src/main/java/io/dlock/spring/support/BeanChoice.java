package io.dlock.spring.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 * Which of the application's beans a dlock component is built on (the lock client: a {@code
 * CuratorFramework}, a {@code LettuceConnectionFactory} or a {@code DataSource}; the {@code
 * Idempotency-Key} records: a {@code LettuceConnectionFactory} or a {@code DataSource}): the kind a
 * property names, else the only kind the application has. With more than one and no choice, none
 * is: the start-up fails naming them, because a silent pick could change with a dependency, and put
 * two versions of an application on different servers during a rolling upgrade.
 *
 * <p>A kind counts when its classes are on the class path and injection by type would resolve to
 * one of its beans ({@code @ConditionalOnSingleCandidate}'s rule, {@link #resolvesToOne}). Several
 * beans of one kind that injection cannot choose between are not counted, or, with {@link
 * #severalOfAKindAreAmbiguous()}, are a choice to make: a component that backs off when it finds no
 * bean (rather than failing, as the lock client does) must not back off silently because there were
 * two.
 *
 * <p>Immutable; conditions call {@link #outcome}, and the bean that reports a failed start calls
 * {@link #problem}.
 */
public final class BeanChoice {

  /**
   * A kind of bean to build on.
   *
   * @param value the property value that chooses it ({@code data-source})
   * @param beanType the bean's type, by name: it may be absent from the class path
   * @param neededClasses the classes, by name, that building on it needs (the dlock module)
   */
  public record Kind(String value, String beanType, List<String> neededClasses) {
    public Kind {
      Objects.requireNonNull(value, "value");
      Objects.requireNonNull(beanType, "beanType");
      neededClasses = List.copyOf(neededClasses);
    }

    /** The bean type's simple name, for messages. */
    public String typeName() {
      return ClassUtils.getShortName(beanType);
    }

    private boolean isAvailable(@Nullable ClassLoader loader) {
      return ClassUtils.isPresent(beanType, loader)
          && neededClasses.stream().allMatch(name -> ClassUtils.isPresent(name, loader));
    }
  }

  /** The beans of one available kind that count for injection: at least one. */
  private record Found(Kind kind, List<String> names, boolean resolves) {
    String describe() {
      return resolves
          ? kind.typeName()
          : names.size() + " " + kind.typeName() + " beans (" + String.join(", ", names) + ")";
    }
  }

  private final String property;
  private final String purpose;
  private final String otherwise;
  private final List<Kind> kinds;
  private final boolean severalOfAKindAreAmbiguous;

  private BeanChoice(
      String property,
      String purpose,
      String otherwise,
      List<Kind> kinds,
      boolean severalOfAKindAreAmbiguous) {
    this.property = property;
    this.purpose = purpose;
    this.otherwise = otherwise;
    this.kinds = kinds;
    this.severalOfAKindAreAmbiguous = severalOfAKindAreAmbiguous;
  }

  /**
   * A choice among {@code kinds}.
   *
   * @param property the property that names the kind to use ({@code dlock.backend-bean})
   * @param purpose what the bean is for, completing "dlock found more than one bean it could ..."
   *     ({@code lock on})
   * @param otherwise the other way out, completing "... set the property, or ..." ({@code set
   *     dlock.backend})
   */
  public static BeanChoice of(String property, String purpose, String otherwise, List<Kind> kinds) {
    return new BeanChoice(
        Objects.requireNonNull(property, "property"),
        Objects.requireNonNull(purpose, "purpose"),
        Objects.requireNonNull(otherwise, "otherwise"),
        List.copyOf(kinds),
        false);
  }

  /**
   * The same choice, in which several beans of one kind, none of them primary, are a choice to make
   * (the start-up fails naming them) instead of not counting.
   */
  public BeanChoice severalOfAKindAreAmbiguous() {
    return new BeanChoice(property, purpose, otherwise, kinds, true);
  }

  public String property() {
    return property;
  }

  /** The kinds whose classes are present and of which injection resolves one bean. */
  public List<Kind> candidates(
      ConfigurableListableBeanFactory beans, @Nullable ClassLoader loader) {
    return found(beans, loader).stream().filter(Found::resolves).map(Found::kind).toList();
  }

  /**
   * The kind the property names, or null if it is unset.
   *
   * @throws IllegalStateException naming the property if the value is not a kind
   */
  public @Nullable Kind chosen(Environment environment) {
    String value = environment.getProperty(property);
    if (value == null || value.isBlank()) {
      return null;
    }
    for (Kind kind : kinds) {
      if (kind.value().equalsIgnoreCase(value.trim())) {
        return kind;
      }
    }
    throw new IllegalStateException(
        property
            + " must be one of "
            + kinds.stream().map(Kind::value).collect(Collectors.joining(", "))
            + ", but was '"
            + value
            + "'");
  }

  /**
   * Why no kind can be chosen although there are beans to choose from, for the start-up failure;
   * null if one can be, or if there is none at all.
   */
  public @Nullable String problem(
      ConfigurableListableBeanFactory beans,
      @Nullable ClassLoader loader,
      Environment environment) {
    List<Found> found = found(beans, loader);
    Kind chosen = chosen(environment);
    if (chosen != null) {
      Found beansOfChosen =
          found.stream().filter(f -> f.kind().equals(chosen)).findFirst().orElse(null);
      if (beansOfChosen != null && beansOfChosen.resolves()) {
        return null;
      }
      return property
          + "="
          + chosen.value()
          + ", but the application has no single "
          + chosen.typeName()
          + " bean"
          + (beansOfChosen == null
              ? ""
              : " (it has " + beansOfChosen.describe() + ", none of them @Primary)")
          + ", or its dlock module is not on the class path";
    }
    List<Found> counted = counted(found);
    if (counted.size() == 1 && !counted.get(0).resolves()) {
      return "dlock found "
          + counted.get(0).describe()
          + " it could "
          + purpose
          + ", none of them @Primary: mark the one to use @Primary, or "
          + otherwise;
    }
    if (counted.size() < 2) {
      return null;
    }
    boolean unresolved = counted.stream().anyMatch(f -> !f.resolves());
    return "dlock found more than one bean it could "
        + purpose
        + " ("
        + counted.stream().map(Found::describe).collect(Collectors.joining(", "))
        + "): set "
        + property
        + " to one of "
        + counted.stream().map(f -> f.kind().value()).collect(Collectors.joining(", "))
        + (unresolved ? " (and mark one bean of a kind with several @Primary)" : "")
        + ", or "
        + otherwise;
  }

  /** Whether {@code kind} is the one to build on, for a condition evaluated as beans register. */
  /**
   * A condition that matches when a module's choice ({@link #choice()}) falls on {@link #kind()}: a
   * module declares one subclass per kind. Evaluated once the bean definitions are known (the
   * auto-configured ones too), as Spring's own bean conditions are.
   */
  public abstract static class Chosen extends SpringBootCondition
      implements ConfigurationCondition {
    protected abstract BeanChoice choice();

    protected abstract Kind kind();

    @Override
    public ConfigurationPhase getConfigurationPhase() {
      return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(
        ConditionContext context, AnnotatedTypeMetadata metadata) {
      return choice().outcome(context, kind());
    }
  }

  public ConditionOutcome outcome(ConditionContext context, Kind kind) {
    Kind chosen = chosen(context.getEnvironment());
    ConfigurableListableBeanFactory beans = context.getBeanFactory();
    if (beans == null) {
      return ConditionOutcome.noMatch("no bean factory");
    }
    List<Found> counted = counted(found(beans, context.getClassLoader()));
    boolean single = counted.stream().anyMatch(f -> f.kind().equals(kind) && f.resolves());
    if (!single) {
      return ConditionOutcome.noMatch("no single " + kind.typeName() + " bean with its module");
    }
    if (chosen != null) {
      return chosen.equals(kind)
          ? ConditionOutcome.match(property + "=" + kind.value())
          : ConditionOutcome.noMatch(property + "=" + chosen.value());
    }
    return counted.size() == 1
        ? ConditionOutcome.match("the only bean to " + purpose + ": " + kind.typeName())
        : ConditionOutcome.noMatch("more than one bean to " + purpose + ", none chosen");
  }

  /** The kinds that take part in the choice: those that resolve, and maybe those that do not. */
  private List<Found> counted(List<Found> found) {
    return severalOfAKindAreAmbiguous ? found : found.stream().filter(Found::resolves).toList();
  }

  private List<Found> found(ConfigurableListableBeanFactory beans, @Nullable ClassLoader loader) {
    List<Found> found = new ArrayList<>();
    for (Kind kind : kinds) {
      if (!kind.isAvailable(loader)) {
        continue;
      }
      Class<?> type = ClassUtils.resolveClassName(kind.beanType(), loader);
      List<String> names = new ArrayList<>();
      boolean resolves = resolvesToOne(beans, type, names);
      if (!names.isEmpty()) {
        found.add(new Found(kind, List.copyOf(names), resolves));
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
  public static boolean resolvesToOne(ConfigurableListableBeanFactory beans, Class<?> type) {
    return resolvesToOne(beans, type, new ArrayList<>());
  }

  /** As {@link #resolvesToOne(ConfigurableListableBeanFactory, Class)}; adds the beans counted. */
  private static boolean resolvesToOne(
      ConfigurableListableBeanFactory beans, Class<?> type, List<String> counted) {
    List<BeanDefinition> candidates = new ArrayList<>();
    int unknown = 0;
    for (String name :
        BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beans, type, true, false)) {
      if (ScopedProxyUtils.isScopedTarget(name)) {
        continue;
      }
      if (!beans.containsBeanDefinition(name)) {
        unknown++; // an ancestor's bean, or one registered as an instance: it counts
        counted.add(name);
        continue;
      }
      BeanDefinition definition = beans.getBeanDefinition(name);
      if (!definition.isAutowireCandidate()
          || (definition instanceof AbstractBeanDefinition d && !d.isDefaultCandidate())) {
        continue;
      }
      candidates.add(definition);
      counted.add(name);
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
}
