package io.dlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lock: acquired before the method, released
 * after it, or, when the method runs inside a Spring-managed transaction, after that transaction
 * completed (commit or rollback), so that the next holder reads committed data.
 *
 * <p>The lock name is {@code dlock.key-prefix + name}, followed by {@code ":" + key} when a key is
 * given. The key is a SpEL expression over the method's arguments ({@code #order.id}, {@code #p0});
 * it is parsed and its variables checked when the bean is created, so a typo fails the start-up,
 * and a key that evaluates to null fails the call with a message naming the method and the
 * expression.
 *
 * <pre>{@code
 * @Locked(name = "stock", key = "#sku", waitTime = "2s")
 * @Transactional
 * public void buy(String sku, int quantity, @FencingToken long token) { ... }
 * }</pre>
 *
 * <p>The fencing token of the grant is available in the method through {@link
 * LockedMethodContext#currentFencingToken()}, or as a {@code long} parameter annotated with {@link
 * FencingToken} (the caller's value is replaced).
 *
 * <p>A scheduled job that runs on one instance at a time, skips elsewhere, stops if its lease is
 * lost, and holds the lock at least a minute:
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 * * * *")
 * @Locked(name = "report", waitTime = "0", onFailure = OnLockFailure.SKIP,
 *         onLeaseLost = OnLeaseLost.INTERRUPT, holdAtLeast = "1m")
 * public void hourlyReport(@FencingToken long token) { ... }
 * }</pre>
 *
 * <p>Works on Spring beans called through their proxy (not on calls from inside the same object),
 * like {@code @Transactional}. Holds are reentrant for the calling thread.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {

  /**
   * The lock's name, also the {@code lock} tag of its metrics (never the evaluated key, which could
   * have unbounded values). Defaults to {@code SimpleClassName.methodName}.
   */
  String name() default "";

  /**
   * A SpEL expression over the method's arguments that is appended to the name: {@code #sku},
   * {@code #order.id}, {@code #p0 + '-' + #p1}. Parameters are known by name when the code is
   * compiled with {@code -parameters}, and always as {@code #p0}, {@code #a0}, ... Empty: the name
   * alone.
   */
  String key() default "";

  /**
   * How long to wait for the lock: {@code "500ms"}, {@code "2s"}, {@code "PT2S"}, {@code "0"} for
   * one attempt, or a {@code ${property}}. Empty: {@code dlock.wait-time}.
   */
  String waitTime() default "";

  /**
   * The lease time, as {@link #waitTime()}. Empty: {@code dlock.lease-time}. The lease is renewed
   * while the method runs unless {@code dlock.renew-lease=false}.
   */
  String leaseTime() default "";

  /**
   * What happens when the lock is not acquired within the wait, or the backend cannot be reached.
   */
  OnLockFailure onFailure() default OnLockFailure.THROW;

  /** What happens to the running method if its lease is lost: see {@link OnLeaseLost}. */
  OnLeaseLost onLeaseLost() default OnLeaseLost.WARN;

  /**
   * The shortest time the lock is held, from its acquisition, even when the method ends sooner:
   * {@code "30s"}, {@code "PT1M"}, or a {@code ${property}}; the release then waits (the lease is
   * renewed meanwhile as usual). ShedLock's {@code lockAtLeastFor}, for {@code @Scheduled} jobs on
   * several instances: with {@code waitTime = "0"} and {@link OnLockFailure#SKIP}, an instance
   * whose scheduler fires a little later finds the lock still held and skips the run instead of
   * running it again. Such a lock is not reentrant: each call is its own grant (under an owner id
   * of its own), so that the next run on the same thread finds the lock still held. Empty: released
   * when the method ends.
   */
  String holdAtLeast() default "";

  /**
   * With {@link OnLockFailure#FALLBACK}: the name of a method of the same class, with the same
   * parameters (optionally followed by one {@link io.dlock.LockException} parameter) and a
   * compatible return type, that is called instead.
   */
  String fallback() default "";
}
