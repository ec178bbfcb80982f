package io.dlock.spring;

import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Applies {@link LeaderOnly}: a call goes through while the election has a valid term ({@link
 * LeaderElection#term()}, which is empty while the term is uncertain), and is skipped otherwise.
 * Matching checks that an election is configured, so a {@code @LeaderOnly} method without one fails
 * the start-up when its bean is proxied.
 *
 * <p>Ordered before the {@link Locked} advisor (outside it and outside a default-ordered
 * {@code @Transactional}): a skipped call takes no lock and starts no transaction.
 */
public final class LeaderOnlyAdvisor extends AbstractPointcutAdvisor {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(LeaderOnlyAdvisor.class);

  private final transient BooleanSupplier electionConfigured;
  private final transient Supplier<LeaderElection> election;

  /**
   * @param electionConfigured whether the election exists, asked when a {@code @LeaderOnly} method
   *     is found
   * @param election the election, looked up at the first call: the advisor is created while the
   *     context still registers its post-processors, too early for the lock client
   */
  public LeaderOnlyAdvisor(BooleanSupplier electionConfigured, Supplier<LeaderElection> election) {
    this.electionConfigured = electionConfigured;
    this.election = election;
  }

  @Override
  public Pointcut getPointcut() {
    return new StaticMethodMatcherPointcut() {
      {
        setClassFilter(
            (ClassFilter) type -> AnnotationUtils.isCandidateClass(type, LeaderOnly.class));
      }

      @Override
      public boolean matches(Method method, Class<?> targetClass) {
        return isLeaderOnly(method, targetClass);
      }
    };
  }

  private boolean isLeaderOnly(Method method, @Nullable Class<?> targetClass) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    boolean annotated =
        AnnotatedElementUtils.hasAnnotation(specific, LeaderOnly.class)
            || (specific != method
                && AnnotatedElementUtils.hasAnnotation(method, LeaderOnly.class));
    if (annotated && !electionConfigured.getAsBoolean()) {
      throw new IllegalStateException(
          "@LeaderOnly on "
              + LockedMethods.describe(specific, targetClass)
              + ": no leader election is configured; set dlock.election.name to the election's"
              + " name (the same on every instance that shares the work)");
    }
    return annotated;
  }

  @Override
  public Advice getAdvice() {
    return (MethodInterceptor) this::invoke;
  }

  private @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Optional<LeaderTerm> term = election.get().term();
    if (term.isEmpty()) {
      Method method = invocation.getMethod();
      if (log.isDebugEnabled()) {
        Object target = invocation.getThis();
        log.debug(
            "{}: skipped, this instance does not lead election '{}' now",
            LockedMethods.describe(method, target == null ? null : AopUtils.getTargetClass(target)),
            election.get().name());
      }
      return LockedResult.of(method.getReturnType()).skippedValue(method.getReturnType());
    }
    LeaderContext.push(term.get());
    try {
      return invocation.proceed();
    } finally {
      LeaderContext.pop();
    }
  }
}
