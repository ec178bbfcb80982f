package io.dlock.spring;

import java.lang.reflect.Method;
import org.aopalliance.aop.Advice;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Applies {@link LockedMethodInterceptor} to {@link Locked} methods. Matching parses and checks
 * each annotated method when its bean is proxied, so bad annotations fail the start-up.
 *
 * <p>Its order (default {@code Ordered.LOWEST_PRECEDENCE - 100}) puts the lock outside a
 * {@code @Transactional} of the same method with the default order: the lock is taken before the
 * transaction starts (no database connection is held while waiting) and released after it ended.
 */
public final class LockedMethodAdvisor extends AbstractPointcutAdvisor {
  private static final long serialVersionUID = 1L;

  private final transient LockedMethods methods;
  private final transient LockedMethodInterceptor interceptor;

  /** An advisor for the methods {@code methods} recognizes. */
  public LockedMethodAdvisor(LockedMethods methods, LockedMethodInterceptor interceptor) {
    this.methods = methods;
    this.interceptor = interceptor;
  }

  @Override
  public Pointcut getPointcut() {
    return new StaticMethodMatcherPointcut() {
      {
        setClassFilter((ClassFilter) type -> AnnotationUtils.isCandidateClass(type, Locked.class));
      }

      @Override
      public boolean matches(Method method, Class<?> targetClass) {
        return methods.isLocked(method, targetClass);
      }
    };
  }

  @Override
  public Advice getAdvice() {
    return interceptor;
  }
}
