package io.dlock.redis;

import io.dlock.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes back an acquisition whose answer never came (a command timeout, a connection lost with the
 * request on the wire). Such a request may still have run on the server: without an undo the lock
 * would stay taken by nobody for a whole lease (up to 7 days with a fixed lease).
 *
 * <p>The undo ({@code undo-acquire.lua}) names the acquire's request id, so it only ever takes back
 * that request's own hold, and it is idempotent. It goes out on the same connection after the
 * acquire, so it runs after it whenever the acquire ran at all, and it carries the script's source,
 * so one send is enough. While the connection is down the undo fails at once (commands are rejected
 * while disconnected): it was not sent, and it is repeated with a capped backoff until it is sent
 * or the lease asked for has ended on its own. An undo that was sent but not answered in time (a
 * network slower than the command timeout) is not repeated: it runs after the acquire as surely as
 * a repeat would. Retries use the common pool's delayed executor: a backend owns no thread.
 */
final class UnansweredAcquireUndo {
  private static final Logger log = LoggerFactory.getLogger(UnansweredAcquireUndo.class);
  private static final long FIRST_RETRY_MILLIS = 50;
  private static final long MAX_RETRY_MILLIS = 2_000;

  private final String lockName;
  private final Supplier<CompletableFuture<Boolean>> undo;
  private final long endNanos;
  private final MonotonicClock clock;
  private final BooleanSupplier closed;

  private UnansweredAcquireUndo(
      String lockName,
      Supplier<CompletableFuture<Boolean>> undo,
      long endNanos,
      MonotonicClock clock,
      BooleanSupplier closed) {
    this.lockName = lockName;
    this.undo = undo;
    this.endNanos = endNanos;
    this.clock = clock;
    this.closed = closed;
  }

  /**
   * Starts undoing: at once, then again after failures until the server answers or {@code lease}
   * after {@code sentNanos} (the acquire's send time on {@code clock}, the client's) has passed.
   *
   * @param closed whether the backend was closed: no undo can be sent any more, so none is retried
   *     (found by review: retries went on after close, every 2 s until the lease ended)
   * @return completes with true when a hold was taken back, false when there was nothing to undo,
   *     the lease ended first or the backend closed; never exceptionally
   */
  static CompletableFuture<Boolean> start(
      String lockName,
      Duration lease,
      long sentNanos,
      MonotonicClock clock,
      BooleanSupplier closed,
      Supplier<CompletableFuture<Boolean>> undo) {
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    new UnansweredAcquireUndo(lockName, undo, sentNanos + lease.toNanos(), clock, closed)
        .attempt(FIRST_RETRY_MILLIS, done);
    return done;
  }

  private void attempt(long nextDelayMillis, CompletableFuture<Boolean> done) {
    CompletableFuture<Boolean> call;
    try {
      call = undo.get();
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    call.whenComplete(
        (undone, error) -> {
          if (error == null) {
            if (undone) {
              log.info("Took back the grant of '{}' whose answer was lost", lockName);
            }
            done.complete(undone);
            return;
          }
          if (closed.getAsBoolean()) {
            log.warn(
                "Could not take back an unanswered acquisition of '{}' before the client closed;"
                    + " it expires with its lease: {}",
                lockName,
                error.toString());
            done.complete(false);
            return;
          }
          long left = endNanos - clock.nanoTime();
          if (left <= 0) {
            log.warn(
                "Could not take back an unanswered acquisition of '{}' before its lease ended: {}",
                lockName,
                error.toString());
            done.complete(false);
            return;
          }
          long delay = Math.min(nextDelayMillis, TimeUnit.NANOSECONDS.toMillis(left) + 1);
          CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS)
              .execute(() -> attempt(Math.min(nextDelayMillis * 2, MAX_RETRY_MILLIS), done));
        });
  }
}
