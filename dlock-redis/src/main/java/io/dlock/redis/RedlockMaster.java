package io.dlock.redis;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClients;
import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redlock master. Once connected, Lettuce keeps the connection up by itself; a master that
 * could not be reached yet is connected in the background, never on a caller's or the renewer's
 * thread: a connection attempt to a dead master takes as long as its connect timeout, far beyond
 * the per-node bound that keeps Redlock's validity arithmetic right. Until then, calls to it fail
 * at once, like the calls to a master that answered too late.
 */
final class RedlockMaster {
  private static final Logger log = LoggerFactory.getLogger(RedlockMaster.class);
  private static final long RECONNECT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final String uri;
  private final RedlockSettings settings;
  private final Executor connector;
  private final AtomicReference<@Nullable RedisLockBackend> backend = new AtomicReference<>();
  private final AtomicBoolean connecting = new AtomicBoolean();
  private final AtomicLong lastAttempt = new AtomicLong();
  private volatile boolean closed;

  /**
   * The system clock on purpose: the reconnection rate limit is real time, stamped before the
   * client starts the backend (and hands it its clock), and measures no lease.
   */
  private final MonotonicClock clock = MonotonicClock.SYSTEM;

  // The last connection attempt started (connectInBackground), done or not.
  private volatile @Nullable CompletableFuture<Boolean> attempt;

  RedlockMaster(String uri, RedlockSettings settings, Executor connector) {
    this.uri = uri;
    this.settings = settings;
    this.connector = connector;
    this.lastAttempt.set(clock.nanoTime() - RECONNECT_INTERVAL_NANOS);
  }

  String redactedUri() {
    return LockClients.redact(uri);
  }

  boolean isConnected() {
    return backend.get() != null;
  }

  /**
   * Starts a connection attempt in the background unless one runs or the last one was less than a
   * second ago.
   *
   * @return completes when the attempt ends (at once if none was started): true if connected
   */
  CompletableFuture<Boolean> connectInBackground() {
    if (backend.get() != null) {
      return CompletableFuture.completedFuture(true);
    }
    long now = clock.nanoTime();
    long last = lastAttempt.get();
    if (closed || now - last < RECONNECT_INTERVAL_NANOS || !connecting.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(false);
    }
    lastAttempt.set(now);
    CompletableFuture<Boolean> started =
        CompletableFuture.supplyAsync(this::connectNow, connector)
            .whenComplete((ok, error) -> connecting.set(false));
    attempt = started;
    return started;
  }

  /**
   * Calls the master as {@link #call(Function, Duration)} does, but a master whose connection is
   * under way (a backend starts once a majority is up, the others still connecting) is first waited
   * for, up to {@code timeout}: for the administrative calls, whose answer depends on every master
   * (a lock held on the master still connecting and one other was listed as free).
   */
  <T> CompletableFuture<T> callOnceConnected(
      Function<RedisLockBackend, CompletableFuture<T>> call, Duration timeout) {
    if (isConnected()) {
      return call(call, timeout);
    }
    CompletableFuture<Boolean> running = attempt;
    CompletableFuture<Boolean> connection =
        running != null && !running.isDone() ? running : connectInBackground();
    return connection
        .completeOnTimeout(false, timeout.toNanos(), TimeUnit.NANOSECONDS)
        .exceptionally(error -> false)
        .thenCompose(connected -> call(call, timeout));
  }

  private boolean connectNow() {
    try {
      RedisLockBackend connected =
          RedisLockBackend.connect(
              RedisLockSettings.of(uri)
                  .withKeyPrefix(settings.keyPrefix())
                  .withCommandTimeout(commandTimeout(settings)));
      if (closed || !backend.compareAndSet(null, connected)) {
        connected.close();
      } else {
        log.info("Redis master {} connected", redactedUri());
      }
      return !closed;
    } catch (RuntimeException e) {
      log.warn("Redis master {} unreachable: {}", redactedUri(), e.getMessage());
      return false;
    }
  }

  /**
   * Lettuce's bound for a master's commands (and its connect timeout): past every bound the backend
   * sets itself, so that Lettuce never cuts a call short first. At least 1 s, the longest bound of
   * a renewal batch ({@link RedlockLockBackend#renew}).
   */
  static Duration commandTimeout(RedlockSettings settings) {
    Duration scaled = settings.nodeTimeout().multipliedBy(4).plusMillis(100);
    return scaled.compareTo(Duration.ofSeconds(1)) > 0 ? scaled : Duration.ofSeconds(1);
  }

  /**
   * Calls the master, bounded by the node timeout; fails at once while it is not connected (and
   * starts connecting it in the background).
   */
  <T> CompletableFuture<T> call(Function<RedisLockBackend, CompletableFuture<T>> call) {
    return call(call, settings.nodeTimeout());
  }

  /**
   * As {@link #call(Function)}, bounded by {@code timeout}. A call that times out is completed with
   * a {@link java.util.concurrent.TimeoutException}, which cancels its commands still in flight
   * ({@link RedisLockBackend}): a silent master's calls do not pile up on its connection.
   */
  <T> CompletableFuture<T> call(
      Function<RedisLockBackend, CompletableFuture<T>> call, Duration timeout) {
    RedisLockBackend node = backend.get();
    if (node == null) {
      connectInBackground();
      return CompletableFuture.failedFuture(
          new BackendUnavailableException("Redis master " + redactedUri() + " is not connected"));
    }
    CompletableFuture<T> answer;
    try {
      answer = call.apply(node);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return bounded(answer, timeout);
  }

  /**
   * {@code answer}, or a {@link TimeoutException} after {@code timeout}. On the timeout, {@code
   * answer} itself is completed first, which cancels its commands ({@link RedisLockBackend}), and
   * only then the returned future: whoever waits for it sees the calls already cancelled.
   */
  private static <T> CompletableFuture<T> bounded(CompletableFuture<T> answer, Duration timeout) {
    CompletableFuture<T> result = new CompletableFuture<>();
    AtomicBoolean timedOut = new AtomicBoolean();
    CompletableFuture<Void> timer =
        new CompletableFuture<Void>().orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
    answer.whenComplete(
        (value, error) -> {
          timer.complete(null); // cancels the timer's task
          if (timedOut.get()) {
            return;
          } else if (error != null) {
            result.completeExceptionally(error);
          } else {
            result.complete(value);
          }
        });
    timer.whenComplete(
        (none, error) -> {
          if (error != null) {
            timedOut.set(true);
            TimeoutException late = new TimeoutException("no answer within " + timeout);
            answer.completeExceptionally(late);
            result.completeExceptionally(late);
          }
        });
    return result;
  }

  /** The connected master, if any: for tests. */
  @Nullable RedisLockBackend connected() {
    return backend.get();
  }

  void close() {
    closed = true;
    RedisLockBackend node = backend.getAndSet(null);
    if (node != null) {
      node.close(commandTimeout(settings)); // one master's close never holds up the others long
    }
  }
}
