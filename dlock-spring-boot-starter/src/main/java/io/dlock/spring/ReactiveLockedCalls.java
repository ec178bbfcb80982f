package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockException;
import io.dlock.LockLostException;
import io.dlock.LockTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

/**
 * {@link Locked} methods returning a Reactor {@code Mono} or {@code Flux}. Each subscription takes
 * the lock without blocking (an asynchronous acquisition: a grant of its own, never a re-entry),
 * then calls the method, with the grant's fencing token in its {@link FencingToken} parameter, and
 * subscribes to what it returns; the lock is released when that ends: completes, fails or is
 * cancelled. A cancelled subscription releases at once, as Reactor's {@code usingWhen} does: work
 * that the cancellation does not stop goes on without the lock. A resubscription ({@code retry},
 * {@code repeat}) takes the lock anew.
 *
 * <p>The method (or its fallback) is called, and its publisher cancelled on a lost lease, on
 * Reactor's {@code boundedElastic} scheduler, and the release made on a thread of its own; never on
 * the lock client's thread that delivered the grant or told the loss: the method may block, and so
 * does a release. A grant whose subscription was cancelled while it was being acquired is released,
 * never dropped. The grant is in the subscriber context under the key {@code Lease.class}.
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
    Mono<Hold> hold = Mono.create(sink -> grant(sink, method, key, acquirer));
    DeferredReleases releases = acquirer.deferredReleases();
    Function<Hold, Publisher<Object>> release = h -> release(h, method, releases);
    if (method.result() == LockedResult.MONO) {
      return Mono.usingWhen(
              hold,
              h -> Mono.from(run(h, method, proxied, args)),
              release,
              (h, e) -> release(h, method, releases),
              release)
          .onErrorResume(NotAcquired.class, e -> Mono.from(failure(method, args, target, e)));
    }
    return Flux.usingWhen(
            hold,
            h -> run(h, method, proxied, args),
            release,
            (h, e) -> release(h, method, releases),
            release)
        .onErrorResume(NotAcquired.class, e -> failure(method, args, target, e));
  }

  /**
   * Acquires for one subscription and hands the grant to {@code sink}, or releases it if the
   * subscription was cancelled meanwhile. A grant is either delivered or released, never dropped:
   * one state decides between the grant's arrival and the cancellation, and a grant delivered just
   * as the subscription is cancelled (which Reactor may then drop) is released by the cancellation
   * too (a second release is a no-op).
   */
  private static void grant(
      MonoSink<Hold> sink, LockedMethod method, @Nullable String key, LockAcquirer acquirer) {
    CompletableFuture<Lease> grant =
        acquirer.acquireAsync(method.name(), key, method.waitTime(), method.options());
    AtomicInteger state = new AtomicInteger(PENDING);
    AtomicReference<Lease> delivered = new AtomicReference<>();
    sink.onCancel(
        () -> {
          int was = state.getAndSet(CANCELLED);
          if (was == PENDING) {
            grant.cancel(false); // a grant that comes anyway is released, by the client or below
          } else if (was == DELIVERED) {
            Lease lease = delivered.get();
            if (lease != null) {
              releaseLater(lease, method);
            }
          }
        });
    grant.whenComplete(
        (lease, error) -> {
          if (error != null) {
            Throwable cause = error instanceof CompletionException ? error.getCause() : error;
            if (state.compareAndSet(PENDING, DELIVERED)) {
              sink.error(isNotAcquired(cause) ? new NotAcquired(cause) : cause);
            }
            return;
          }
          delivered.set(lease);
          if (state.compareAndSet(PENDING, DELIVERED)) {
            sink.success(new Hold(lease, System.nanoTime()));
          } else {
            releaseLater(lease, method);
          }
        });
  }

  private static final int PENDING = 0;
  private static final int DELIVERED = 1;
  private static final int CANCELLED = 2;

  /** Releases off the calling thread (the lock client's, or a cancelling subscriber's). */
  private static void releaseLater(Lease lease, LockedMethod method) {
    LockedReleases.runOffThread(() -> LockedReleases.release(lease, method.description()));
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
    // The method runs on boundedElastic, never on the lock client's thread that granted.
    work = work.subscribeOn(Schedulers.boundedElastic());
    if (method.onLeaseLost() == OnLeaseLost.INTERRUPT) {
      // The loss is told on the client's event thread: cancel the work (and run its cancellation
      // handlers) on boundedElastic instead.
      Mono<LeaseLostEvent> lost =
          Mono.<LeaseLostEvent>create(sink -> lease.onLost(sink::success))
              .publishOn(Schedulers.boundedElastic());
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

  private static Mono<Object> release(Hold hold, LockedMethod method, DeferredReleases releases) {
    return Mono.create(
        sink ->
            LockedReleases.runOffThread(
                () -> {
                  try {
                    LockedReleases.releaseWhenDue(
                        hold.lease(), method, hold.acquiredAt(), releases);
                    LockedReleases.warnIfLost(hold.lease(), method);
                  } finally {
                    sink.success();
                  }
                }));
  }

  /**
   * What a subscription gets when the lock was not acquired, made at its subscription (on
   * boundedElastic: the acquisition's failure is told on the lock client's thread, and a fallback
   * method may block).
   */
  private static Publisher<Object> failure(
      LockedMethod method, Object[] args, @Nullable Object target, NotAcquired failure) {
    return Flux.defer(() -> onFailure(method, args, target, failure))
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
