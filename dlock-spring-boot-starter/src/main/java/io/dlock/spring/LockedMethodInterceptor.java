package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockException;
import io.dlock.LockInterruptedException;
import io.dlock.LockLostException;
import io.dlock.LockTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Runs a {@link Locked} method under its lock.
 *
 * <p>Release: after the method, unless the method ran inside a Spring-managed transaction (active
 * transaction synchronization) and {@code dlock.release-after-transaction} is on; the release then
 * runs after the transaction completed, commit or rollback, so that no other holder can read what
 * this one wrote before it is committed. If the lease was lost while the method ran inside such a
 * transaction, the interceptor throws {@link LockLostException} so that the transaction rolls back
 * instead of committing writes made without the lock.
 *
 * <p>With {@link Locked#holdAtLeast()}, a release that comes sooner than that after the acquisition
 * is delayed until then (on a timer; the lease is renewed meanwhile). With {@link
 * OnLeaseLost#INTERRUPT}, a loss while the method runs interrupts its thread.
 *
 * <p>A method returning a {@code CompletableFuture} or {@code CompletionStage} takes its lock on
 * the calling thread as any other does, and holds it until the returned stage completes; the caller
 * gets a stage that completes after the release. A method returning a Reactor {@code Mono} or
 * {@code Flux} is left to {@link ReactiveLockedCalls}: the lock is taken without blocking at each
 * subscription. Neither waits for a surrounding transaction: the work outlives the call.
 */
public final class LockedMethodInterceptor implements MethodInterceptor {
  private static final Logger log = LoggerFactory.getLogger(LockedMethodInterceptor.class);

  private final LockedMethods methods;
  private final Supplier<LockAcquirer> acquirer;
  private final BooleanSupplier releaseAfterTransaction;

  /**
   * @param acquirer the acquirer, looked up at the first call: the advisor is created while the
   *     application context is still registering its post-processors, too early for the lock client
   *     and the meter registry
   * @param releaseAfterTransaction whether to defer the release to the end of a surrounding
   *     transaction; see {@code dlock.release-after-transaction}
   */
  public LockedMethodInterceptor(
      LockedMethods methods,
      Supplier<LockAcquirer> acquirer,
      BooleanSupplier releaseAfterTransaction) {
    this.methods = methods;
    this.acquirer = acquirer;
    this.releaseAfterTransaction = releaseAfterTransaction;
  }

  @Override
  public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    Class<?> targetClass = target == null ? null : AopUtils.getTargetClass(target);
    LockedMethod method = methods.get(invocation.getMethod(), targetClass);
    Object[] args = invocation.getArguments();
    String key = method.key(args, target);
    if (method.result() == LockedResult.MONO || method.result() == LockedResult.FLUX) {
      return ReactiveLockedCalls.call(method, key, invocation, acquirer.get());
    }
    Lease lease;
    long acquiredAt;
    // Taken with the lease, not at its release: the acquirer may be destroyed by then (found by
    // review: a job ending during shutdown failed to release).
    DeferredReleases releases;
    try {
      lease = acquire(method, key);
      acquiredAt = System.nanoTime();
      releases = acquirer.get().deferredReleases();
    } catch (LockTimeoutException | BackendUnavailableException e) {
      log.debug("{}: lock not acquired: {}", method.description(), e.getMessage());
      if (method.result() == LockedResult.COMPLETION_STAGE) {
        return failedStage(method, args, target, e);
      }
      return method.onFailure(args, target, e);
    } catch (LockInterruptedException e) {
      if (method.result() == LockedResult.COMPLETION_STAGE) {
        return CompletableFuture.failedFuture(e); // interrupt flag stays set
      }
      throw e;
    }
    if (method.fencingTokenIndex() >= 0) {
      // The invocation's own argument array: what the method receives.
      args[method.fencingTokenIndex()] = lease.fencingToken();
    }
    Object result;
    LostLeaseInterrupt interrupt =
        method.onLeaseLost() == OnLeaseLost.INTERRUPT ? LostLeaseInterrupt.watch(lease) : null;
    LockedMethodContext.push(lease);
    try {
      result = invocation.proceed();
    } catch (Throwable t) {
      LockedMethodContext.pop();
      if (interrupt != null) {
        interrupt.methodReturned();
      }
      releaseOrDefer(lease, method, acquiredAt, releases);
      throw t;
    }
    LockedMethodContext.pop();
    if (interrupt != null) {
      interrupt.methodReturned();
    }
    if (method.result() == LockedResult.COMPLETION_STAGE && result != null) {
      // Held until the work the method started is done, not only until it returned.
      return LockedReleases.afterCompletion(
          (CompletionStage<?>) result, lease, method, acquiredAt, releases);
    }
    boolean deferred = releaseOrDefer(lease, method, acquiredAt, releases);
    if (LockedReleases.wasLost(lease)) {
      String message = LockedReleases.lostMessage(lease, method);
      if (deferred) {
        throw new LockLostException(message + "; the transaction is rolled back");
      }
      log.warn("{}; another holder may have run at the same time", message);
    }
    return result;
  }

  /**
   * What a method returning a future answers when its lock was not acquired: its failure in the
   * future, where a caller of such a method looks for it, or the skip or fallback value.
   */
  private static @Nullable Object failedStage(
      LockedMethod method, Object[] args, @Nullable Object target, LockException failure) {
    try {
      return method.onFailure(args, target, failure);
    } catch (Throwable t) {
      return CompletableFuture.failedFuture(t);
    }
  }

  /**
   * The method's lock. With {@link Locked#holdAtLeast()}, or for a method returning a future, a
   * grant of this call's own: its hold outlives the method, and the next call on the same thread (a
   * scheduler's next run, or the next request on a pooled thread while the first future still runs)
   * must find the lock held, not re-enter it. ShedLock's locks are not reentrant either.
   */
  private Lease acquire(LockedMethod method, @Nullable String key) {
    LockAcquirer locks = acquirer.get();
    if (method.holdAtLeast().isZero() && !method.result().isAsync()) {
      return locks.acquire(method.name(), key, method.waitTime(), method.options());
    }
    return locks
        .acquireOwnGrant(method.name(), key, method.waitTime(), method.options())
        .orElseThrow(
            () ->
                new LockTimeoutException(
                    "Lock of "
                        + method.description()
                        + " not acquired within "
                        + method.waitTime()
                        + ": held by another holder"));
  }

  /** Releases now, or after the surrounding transaction; true if deferred. */
  private boolean releaseOrDefer(
      Lease lease, LockedMethod method, long acquiredAt, DeferredReleases releases) {
    if (releaseAfterTransaction.getAsBoolean()
        && !method.result().isAsync() // their work outlives the call, and any transaction of it
        && TransactionSynchronizationManager.isSynchronizationActive()) {
      TransactionSynchronizationManager.registerSynchronization(
          new ReleaseAfterCompletion(lease, method, acquiredAt, releases));
      return true;
    }
    LockedReleases.releaseWhenDue(lease, method, acquiredAt, releases);
    return false;
  }

  /** Releases a lease once the transaction it was taken in has committed or rolled back. */
  private static final class ReleaseAfterCompletion implements TransactionSynchronization {
    private final Lease lease;
    private final LockedMethod method;
    private final long acquiredAt;
    private final DeferredReleases releases;

    ReleaseAfterCompletion(
        Lease lease, LockedMethod method, long acquiredAt, DeferredReleases releases) {
      this.lease = lease;
      this.method = method;
      this.acquiredAt = acquiredAt;
      this.releases = releases;
    }

    @Override
    public void afterCompletion(int status) {
      LockedReleases.releaseWhenDue(lease, method, acquiredAt, releases);
    }
  }
}
