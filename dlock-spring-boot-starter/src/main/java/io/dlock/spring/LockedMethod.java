package io.dlock.spring;

import io.dlock.LockException;
import io.dlock.LockOptions;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;

/**
 * A {@link Locked} method, parsed and checked once: its lock name pattern, key expression, wait,
 * lease options, failure strategy and fencing-token parameter.
 */
final class LockedMethod {
  private final String description;
  private final String name;
  private final @Nullable Expression key;
  private final Duration waitTime;
  private final LockOptions options;
  private final OnLockFailure onFailure;
  private final OnLeaseLost onLeaseLost;
  private final Duration holdAtLeast;
  private final @Nullable Method fallback;
  private final int fencingTokenIndex;
  private final Method method;
  private final LockedResult result;
  private final ParameterNameDiscoverer parameterNames;
  private final @Nullable BeanResolver beanResolver;

  LockedMethod(
      String description,
      String name,
      @Nullable Expression key,
      Duration waitTime,
      LockOptions options,
      OnLockFailure onFailure,
      OnLeaseLost onLeaseLost,
      Duration holdAtLeast,
      @Nullable Method fallback,
      int fencingTokenIndex,
      Method method,
      ParameterNameDiscoverer parameterNames,
      @Nullable BeanResolver beanResolver) {
    this.description = description;
    this.name = name;
    this.key = key;
    this.waitTime = waitTime;
    this.options = options;
    this.onFailure = onFailure;
    this.onLeaseLost = onLeaseLost;
    this.holdAtLeast = holdAtLeast;
    this.fallback = fallback;
    this.fencingTokenIndex = fencingTokenIndex;
    this.method = method;
    this.result = LockedResult.of(method.getReturnType());
    this.parameterNames = parameterNames;
    this.beanResolver = beanResolver;
  }

  /** {@code SimpleClassName.method(ParamType, ...)}, for messages. */
  String description() {
    return description;
  }

  /** The name pattern: the lock name without prefix and key, the {@code lock} tag of metrics. */
  String name() {
    return name;
  }

  Duration waitTime() {
    return waitTime;
  }

  LockOptions options() {
    return options;
  }

  OnLeaseLost onLeaseLost() {
    return onLeaseLost;
  }

  /** How long the lock is held at least from its acquisition; zero: released when done. */
  Duration holdAtLeast() {
    return holdAtLeast;
  }

  /** What the method returns, which decides how long the lock is held. */
  LockedResult result() {
    return result;
  }

  int fencingTokenIndex() {
    return fencingTokenIndex;
  }

  /**
   * The key for one call, or null if the method has no key expression: the lock name is then the
   * name alone.
   *
   * @throws IllegalArgumentException naming the method and the expression if the key fails or is
   *     null
   */
  @Nullable String key(Object[] args, @Nullable Object target) {
    if (key == null) {
      return null;
    }
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(
            new KeyRoot(method, args, target), method, args, parameterNames);
    if (beanResolver != null) {
      context.setBeanResolver(beanResolver);
    }
    Object value;
    try {
      value = key.getValue(context);
    } catch (EvaluationException e) {
      throw new IllegalArgumentException(
          "@Locked key '"
              + key.getExpressionString()
              + "' of "
              + description
              + " failed: "
              + e.getMessage(),
          e);
    }
    if (value == null) {
      throw new IllegalArgumentException(
          "@Locked key '"
              + key.getExpressionString()
              + "' of "
              + description
              + " evaluated to null; a lock needs a key (check the arguments of the call)");
    }
    return String.valueOf(value);
  }

  /**
   * What the call returns when the lock was not acquired.
   *
   * @throws Throwable {@code failure} for {@link OnLockFailure#THROW}, or what the fallback throws
   */
  @Nullable Object onFailure(Object[] args, @Nullable Object target, LockException failure)
      throws Throwable {
    switch (onFailure) {
      case SKIP:
        return result.skippedValue(method.getReturnType());
      case FALLBACK:
        Method fb = fallback;
        if (fb == null || target == null) {
          throw failure;
        }
        Object[] fbArgs = args;
        if (fb.getParameterCount() == args.length + 1) {
          fbArgs = java.util.Arrays.copyOf(args, args.length + 1);
          fbArgs[args.length] = failure;
        }
        try {
          return fb.invoke(target, fbArgs);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
      case THROW:
      default:
        throw failure;
    }
  }

  /**
   * The root object of key expressions: {@code #root.method}, {@code #root.args}, {@code
   * #root.target}.
   *
   * @param method the annotated method
   * @param args the call's arguments
   * @param target the bean
   */
  record KeyRoot(Method method, Object[] args, @Nullable Object target) {}
}
