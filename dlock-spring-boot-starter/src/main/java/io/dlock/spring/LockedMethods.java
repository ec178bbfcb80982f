package io.dlock.spring;

import io.dlock.LockException;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.spring.autoconfigure.DlockProperties;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringValueResolver;

/**
 * Finds, parses and checks {@link Locked} methods, once per method and bean class. Called when a
 * bean is created (through the advisor's pointcut), so a bad annotation fails the start-up with a
 * message naming the method and the attribute.
 */
public final class LockedMethods {
  private static final ParameterNameDiscoverer PARAMETER_NAMES =
      new DefaultParameterNameDiscoverer();

  private final Map<MethodClassKey, Optional<LockedMethod>> cache = new ConcurrentHashMap<>();
  private final SpelExpressionParser parser = new SpelExpressionParser();
  private final Supplier<DlockProperties> properties;
  private final @Nullable StringValueResolver placeholders;
  private final @Nullable BeanFactory beanFactory;

  /**
   * @param properties the properties, looked up when the first annotated method is found: the
   *     advisor that calls this is created while post-processors are still being registered
   * @param placeholders resolves {@code ${...}} in names and durations, or null
   * @param beanFactory for {@code @bean} references in key expressions, or null
   */
  public LockedMethods(
      Supplier<DlockProperties> properties,
      @Nullable StringValueResolver placeholders,
      @Nullable BeanFactory beanFactory) {
    this.properties = properties;
    this.placeholders = placeholders;
    this.beanFactory = beanFactory;
  }

  /** Whether {@code method} of {@code targetClass} is a {@link Locked} method. */
  public boolean isLocked(Method method, @Nullable Class<?> targetClass) {
    return find(method, targetClass).isPresent();
  }

  /**
   * The parsed method.
   *
   * @throws IllegalStateException if it is not a {@link Locked} method
   */
  LockedMethod get(Method method, @Nullable Class<?> targetClass) {
    return find(method, targetClass)
        .orElseThrow(() -> new IllegalStateException(method + " is not annotated with @Locked"));
  }

  private Optional<LockedMethod> find(Method method, @Nullable Class<?> targetClass) {
    MethodClassKey key = new MethodClassKey(method, targetClass);
    Optional<LockedMethod> found = cache.get(key);
    if (found == null) {
      // Not computeIfAbsent: parsing may create beans (the properties), whose proxying comes back
      // here for other methods. Two threads parsing the same method get equal results.
      found = parse(method, targetClass);
      Optional<LockedMethod> raced = cache.putIfAbsent(key, found);
      if (raced != null) {
        found = raced;
      }
    }
    return found;
  }

  private Optional<LockedMethod> parse(Method method, @Nullable Class<?> targetClass) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    Locked annotation = AnnotatedElementUtils.findMergedAnnotation(specific, Locked.class);
    if (annotation == null && specific != method) {
      annotation = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
    }
    if (annotation == null) {
      return Optional.empty();
    }
    DlockProperties properties = this.properties.get();
    String description = describe(specific, targetClass);
    String where = "@Locked on " + description + ": ";
    String name = resolve(annotation.name());
    if (name.isEmpty()) {
      name =
          ClassUtils.getUserClass(specific.getDeclaringClass()).getSimpleName()
              + "."
              + specific.getName();
    }
    try {
      LockNames.requireValid(properties.getKeyPrefix() + name);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(where + "name '" + name + "': " + e.getMessage(), e);
    }
    Expression key = parseKey(annotation.key(), specific, where);
    Duration wait = duration(annotation.waitTime(), "waitTime", where);
    if (wait == null) {
      wait = properties.checkedWaitTime();
    } else if (wait.isNegative()) {
      throw new IllegalStateException(where + "waitTime must be >= 0, but was " + wait);
    }
    LockOptions options = properties.toLockOptions();
    Duration lease = duration(annotation.leaseTime(), "leaseTime", where);
    if (lease != null) {
      try {
        options =
            options.autoRenew() ? options.withRenewedLease(lease) : options.withFixedLease(lease);
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(where + e.getMessage(), e);
      }
    }
    Duration holdAtLeast = duration(annotation.holdAtLeast(), "holdAtLeast", where);
    if (holdAtLeast == null) {
      holdAtLeast = Duration.ZERO;
    } else if (holdAtLeast.isNegative()) {
      throw new IllegalStateException(where + "holdAtLeast must be >= 0, but was " + holdAtLeast);
    }
    if (annotation.onLeaseLost() == OnLeaseLost.INTERRUPT
        && LockedResult.of(specific.getReturnType()) == LockedResult.COMPLETION_STAGE) {
      throw new IllegalStateException(
          where
              + "onLeaseLost = INTERRUPT needs the method's work to run on the calling thread,"
              + " but it returns a "
              + specific.getReturnType().getSimpleName()
              + " (return a Mono or Flux to have a lost lease cancel the work)");
    }
    Method fallback = fallback(annotation, specific, targetClass, where);
    int fencingIndex = fencingTokenIndex(specific, where);
    return Optional.of(
        new LockedMethod(
            description,
            name,
            key,
            wait,
            options,
            annotation.onFailure(),
            annotation.onLeaseLost(),
            holdAtLeast,
            fallback,
            fencingIndex,
            specific,
            PARAMETER_NAMES,
            beanFactory == null ? null : new BeanFactoryResolver(beanFactory)));
  }

  private @Nullable Expression parseKey(String text, Method method, String where) {
    if (text.isBlank()) {
      return null;
    }
    Expression expression;
    try {
      expression = parser.parseExpression(text);
    } catch (ParseException e) {
      throw new IllegalStateException(
          where + "key '" + text + "' is not a valid SpEL expression: " + e.getMessage(), e);
    }
    Set<String> known = new LinkedHashSet<>();
    String[] names = PARAMETER_NAMES.getParameterNames(method);
    if (names != null) {
      known.addAll(Arrays.asList(names));
    }
    for (int i = 0; i < method.getParameterCount(); i++) {
      known.add("p" + i);
      known.add("a" + i);
    }
    known.add("root");
    known.add("this");
    List<String> unknown = new ArrayList<>();
    if (expression instanceof SpelExpression spel) {
      collectVariables(spel.getAST(), unknown);
    }
    unknown.removeAll(known);
    if (!unknown.isEmpty()) {
      throw new IllegalStateException(
          where
              + "key '"
              + text
              + "' uses "
              + unknown.stream().map(v -> "#" + v).collect(Collectors.joining(", "))
              + ", which is not a parameter; known: "
              + known.stream().map(v -> "#" + v).collect(Collectors.joining(", "))
              + (names == null
                  ? " (parameter names are not in the class file: compile with -parameters, or"
                      + " use #p0, #p1, ...)"
                  : ""));
    }
    return expression;
  }

  private static void collectVariables(SpelNode node, List<String> into) {
    if (node instanceof VariableReference) {
      into.add(node.toStringAST().substring(1));
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      collectVariables(node.getChild(i), into);
    }
  }

  private @Nullable Duration duration(String text, String attribute, String where) {
    String value = resolve(text).trim();
    if (value.isEmpty()) {
      return null;
    }
    try {
      return DurationStyle.detectAndParse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          where
              + attribute
              + " '"
              + text
              + "' is not a duration: use 500ms, 2s, 1m or ISO-8601 such as PT2S",
          e);
    }
  }

  private static @Nullable Method fallback(
      Locked annotation, Method method, @Nullable Class<?> targetClass, String where) {
    String name = annotation.fallback();
    if (annotation.onFailure() != OnLockFailure.FALLBACK) {
      if (!name.isEmpty()) {
        throw new IllegalStateException(
            where
                + "fallback '"
                + name
                + "' is set but onFailure is "
                + annotation.onFailure()
                + "; set onFailure = OnLockFailure.FALLBACK");
      }
      return null;
    }
    if (name.isEmpty()) {
      throw new IllegalStateException(
          where + "onFailure = FALLBACK needs fallback = \"<method name>\"");
    }
    Class<?> type = targetClass != null ? targetClass : method.getDeclaringClass();
    Class<?>[] params = method.getParameterTypes();
    Class<?>[] withFailure = Arrays.copyOf(params, params.length + 1);
    withFailure[params.length] = LockException.class;
    Method found = findMethod(type, name, params);
    if (found == null) {
      found = findMethod(type, name, withFailure);
    }
    if (found == null) {
      throw new IllegalStateException(
          where
              + "fallback method '"
              + name
              + "' not found in "
              + type.getSimpleName()
              + ": it needs the parameters ("
              + Arrays.stream(params).map(Class::getSimpleName).collect(Collectors.joining(", "))
              + "), optionally followed by LockException");
    }
    if (!ClassUtils.isAssignable(method.getReturnType(), found.getReturnType())
        && method.getReturnType() != void.class) {
      throw new IllegalStateException(
          where
              + "fallback method '"
              + name
              + "' returns "
              + found.getReturnType().getSimpleName()
              + ", not assignable to "
              + method.getReturnType().getSimpleName());
    }
    found.setAccessible(true);
    return found;
  }

  private static @Nullable Method findMethod(Class<?> type, String name, Class<?>[] params) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      try {
        return c.getDeclaredMethod(name, params);
      } catch (NoSuchMethodException e) {
        // look in the superclass
      }
    }
    return null;
  }

  private static int fencingTokenIndex(Method method, String where) {
    int index = -1;
    java.lang.annotation.Annotation[][] annotations = method.getParameterAnnotations();
    for (int i = 0; i < annotations.length; i++) {
      for (java.lang.annotation.Annotation a : annotations[i]) {
        if (a instanceof FencingToken) {
          Class<?> type = method.getParameterTypes()[i];
          if (type != long.class && type != Long.class) {
            throw new IllegalStateException(
                where + "@FencingToken parameter " + i + " must be a long, but is " + type);
          }
          if (index >= 0) {
            throw new IllegalStateException(where + "more than one @FencingToken parameter");
          }
          index = i;
        }
      }
    }
    return index;
  }

  private String resolve(String text) {
    if (placeholders == null || text.isEmpty()) {
      return text;
    }
    String resolved = placeholders.resolveStringValue(text);
    return resolved == null ? "" : resolved;
  }

  /**
   * {@code Type.method(ParamType, ...)}: how messages and logs name a locked method ({@code
   * targetClass}'s user class, else the declaring one).
   */
  public static String describe(Method method, @Nullable Class<?> targetClass) {
    Class<?> type =
        ClassUtils.getUserClass(targetClass != null ? targetClass : method.getDeclaringClass());
    return type.getSimpleName()
        + "."
        + method.getName()
        + "("
        + Arrays.stream(method.getParameterTypes())
            .map(Class::getSimpleName)
            .collect(Collectors.joining(", "))
        + ")";
  }
}
