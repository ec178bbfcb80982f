package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockException;
import io.dlock.LockLostException;
import io.dlock.LockTimeoutException;
import java.util.function.Function;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@link Locked} methods returning a Reactor {@code Mono} or {@code Flux}. Each subscription takes
 * the lock without blocking (an asynchronous acquisition: a grant of its own, never a re-entry),
 * then calls the method, with the grant's fencing token in its {@link FencingToken} parameter, and
 * subscribes to what it returns; the lock is released when that ends: completes, fails or is
 * cancelled. A resubscription ({@code retry}, {@code repeat}) takes the lock anew.
 *
 * <p>The method is called, and the release made, on Reactor's {@code boundedElastic} scheduler,
 * never on the lock client's thread that delivered the grant: the method may block, and so does a
 * release. The grant is in the subscriber context under the key {@code Lease.class}.
 *
 * <p>A lock not acquired is the method's failure ({@link OnLockFailure#THROW}: an error signal), an
 * empty publisher ({@link OnLockFailure#SKIP}) or the fallback's publisher. With {@link
 * OnLeaseLost#INTERRUPT}, a lost lease cancels the method's publisher and signals {@link
 * LockLostException}.
 *
 * <p>Loaded only when Reactor is on the class path.
 */
final class ReactiveLockedCalls {
  private ReactiveLockedCalls() {}

  /** The {@code Mono} or {@code Flux} a call of {@code method} returns. */
  static Object call(
      LockedMethod method,
      @Nullable String key,
      MethodInvocation invocation,
      LockAcquirer acquirer) {
    if (!(invocation instanceof ProxyMethodInvocation proxied)) {
      throw new IllegalStateException(
          "@Locked on " + method.description() + " needs a Spring AOP proxy to call it later");
    }
    Object[] args = invocation.getArguments().clone();
    Object target = invocation.getThis();
    Mono<Hold> hold =
        Mono.fromFuture(
                () ->
                    acquirer.acquireAsync(method.name(), key, method.waitTime(), method.options()))
            .onErrorMap(ReactiveLockedCalls::isNotAcquired, NotAcquired::new)
            .map(lease -> new Hold(lease, System.nanoTime()))
            .publishOn(Schedulers.boundedElastic());
    Function<Hold, Publisher<Object>> release = h -> release(h, method);
    if (method.result() == LockedResult.MONO) {
      return Mono.usingWhen(
              hold,
              h -> Mono.from(run(h, method, proxied, args)),
              release,
              (h, e) -> release(h, method),
              release)
          .onErrorResume(NotAcquired.class, e -> Mono.from(onFailure(method, args, target, e)));
    }
    return Flux.usingWhen(
            hold,
            h -> run(h, method, proxied, args),
            release,
            (h, e) -> release(h, method),
            release)
        .onErrorResume(NotAcquired.class, e -> onFailure(method, args, target, e));
  }

  /** An empty publisher of a skipped call's type. */
  static Object empty(LockedResult result) {
    return result == LockedResult.MONO ? Mono.empty() : Flux.empty();
  }

  /** A grant and when it was made (for {@link Locked#holdAtLeast()}). */
  private record Hold(Lease lease, long acquiredAt) {}

  /** The acquisition's own failure, told apart from the same exceptions out of the method. */
  private static final class NotAcquired extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotAcquired(Throwable cause) {
      super(cause.getMessage(), cause, false, false);
    }
  }

  private static boolean isNotAcquired(Throwable e) {
    return e instanceof LockTimeoutException || e instanceof BackendUnavailableException;
  }

  /** Calls the method for this subscription's grant and returns its publisher. */
  private static Flux<Object> run(
      Hold hold, LockedMethod method, ProxyMethodInvocation invocation, Object[] args) {
    Lease lease = hold.lease();
    Flux<Object> work =
        Flux.defer(
            () -> {
              Object[] callArgs = args.clone();
              if (method.fencingTokenIndex() >= 0) {
                callArgs[method.fencingTokenIndex()] = lease.fencingToken();
              }
              Object published;
              try {
                published = invocation.invocableClone(callArgs).proceed();
              } catch (Throwable t) {
                return Flux.error(t);
              }
              return published == null ? Flux.empty() : Flux.from((Publisher<?>) published);
            });
    if (method.onLeaseLost() == OnLeaseLost.INTERRUPT) {
      Mono<LeaseLostEvent> lost = Mono.create(sink -> lease.onLost(sink::success));
      work =
          work.takeUntilOther(lost)
              .concatWith(
                  Mono.defer(
                      () ->
                          LockedReleases.wasLost(lease)
                              ? Mono.error(
                                  new LockLostException(LockedReleases.lostMessage(lease, method)))
                              : Mono.empty()));
    }
    return work.contextWrite(context -> context.put(Lease.class, lease));
  }

  private static Mono<Object> release(Hold hold, LockedMethod method) {
    return Mono.fromRunnable(
            () -> {
              LockedReleases.releaseWhenDue(hold.lease(), method, hold.acquiredAt());
              LockedReleases.warnIfLost(hold.lease(), method);
            })
        .subscribeOn(Schedulers.boundedElastic());
  }

  @SuppressWarnings("unchecked")
  private static Publisher<Object> onFailure(
      LockedMethod method, Object[] args, @Nullable Object target, NotAcquired failure) {
    try {
      Object fallback = method.onFailure(args, target, (LockException) failure.getCause());
      return fallback == null ? Flux.empty() : (Publisher<Object>) fallback;
    } catch (Throwable t) {
      return Flux.error(t);
    }
  }
}
