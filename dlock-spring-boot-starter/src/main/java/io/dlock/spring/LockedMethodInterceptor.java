package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockException;
import io.dlock.LockLostException;
import io.dlock.LockTimeoutException;
import io.dlock.spi.DriverThreads;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
    Lease lease;
    long acquiredAt;
    try {
      lease = acquire(method, key);
      acquiredAt = System.nanoTime();
    } catch (LockTimeoutException | BackendUnavailableException e) {
      log.debug("{}: lock not acquired: {}", method.description(), e.getMessage());
      return method.onFailure(args, target, e);
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
      releaseOrDefer(lease, method, acquiredAt);
      throw t;
    }
    LockedMethodContext.pop();
    if (interrupt != null) {
      interrupt.methodReturned();
    }
    boolean deferred = releaseOrDefer(lease, method, acquiredAt);
    if (!lease.isValid() && lease.state() != io.dlock.LeaseState.RELEASED) {
      String message =
          "the lease of lock '"
              + lease.lockName()
              + "' (fencing token "
              + lease.fencingToken()
              + ") was lost while "
              + method.description()
              + " ran";
      if (deferred) {
        throw new LockLostException(message + "; the transaction is rolled back");
      }
      log.warn("{}; another holder may have run at the same time", message);
    }
    return result;
  }

  /**
   * The method's lock. With {@link Locked#holdAtLeast()}, a grant of this call's own: its hold
   * outlives the method, and the next call on the same thread (a scheduler's next run) must find
   * the lock held, not re-enter it. ShedLock's locks are not reentrant either.
   */
  private Lease acquire(LockedMethod method, @Nullable String key) {
    LockAcquirer locks = acquirer.get();
    if (method.holdAtLeast().isZero()) {
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
  private boolean releaseOrDefer(Lease lease, LockedMethod method, long acquiredAt) {
    if (releaseAfterTransaction.getAsBoolean()
        && TransactionSynchronizationManager.isSynchronizationActive()) {
      TransactionSynchronizationManager.registerSynchronization(
          new ReleaseAfterCompletion(lease, method, acquiredAt));
      return true;
    }
    releaseWhenDue(lease, method, acquiredAt);
    return false;
  }

  /** Releases now, or once {@link Locked#holdAtLeast()} has passed since the acquisition. */
  private static void releaseWhenDue(Lease lease, LockedMethod method, long acquiredAt) {
    long left = method.holdAtLeast().toNanos() - (System.nanoTime() - acquiredAt);
    if (left <= 0) {
      release(lease, method.description());
      return;
    }
    try {
      HeldReleases.TIMER.schedule(
          () -> release(lease, method.description()), left, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      release(lease, method.description()); // the JVM is shutting down: release now
    }
  }

  /**
   * The timer of releases delayed by {@link Locked#holdAtLeast()}: one daemon thread, made once.
   */
  private static final class HeldReleases {
    static final ScheduledExecutorService TIMER = DriverThreads.timer("dlock-locked-hold-release");
  }

  private static void release(Lease lease, String description) {
    try {
      lease.release();
    } catch (LockException e) {
      // The method's work is done; the lock expires on the server after its lease.
      log.warn("{}: release of lock '{}' failed: {}", description, lease.lockName(), e.toString());
    }
  }

  /** Releases a lease once the transaction it was taken in has committed or rolled back. */
  private static final class ReleaseAfterCompletion implements TransactionSynchronization {
    private final Lease lease;
    private final LockedMethod method;
    private final long acquiredAt;

    ReleaseAfterCompletion(Lease lease, LockedMethod method, long acquiredAt) {
      this.lease = lease;
      this.method = method;
      this.acquiredAt = acquiredAt;
    }

    @Override
    public void afterCompletion(int status) {
      releaseWhenDue(lease, method, acquiredAt);
    }
  }
}
