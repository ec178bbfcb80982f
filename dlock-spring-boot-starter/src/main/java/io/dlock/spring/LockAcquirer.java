package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Takes locks for the starter's features ({@code @Locked}, the ShedLock provider) under names built
 * by {@link LockNamePatterns}: {@code dlock.key-prefix + pattern}, followed by {@code ":" + key}
 * when there is a key. Building the name there is what lets the client's metrics listener tag the
 * lock with its pattern; the metrics themselves come from the client's {@link
 * io.dlock.LockEventListener}, like those of every other lock of the client.
 */
public final class LockAcquirer implements AutoCloseable {
  private final LockClient client;
  private final LockNamePatterns names;
  private final DeferredReleases deferredReleases =
      new DeferredReleases("dlock-locked-hold-release");

  public LockAcquirer(LockClient client, LockNamePatterns names) {
    this.client = Objects.requireNonNull(client, "client");
    this.names = Objects.requireNonNull(names, "names");
  }

  /**
   * The releases of {@link Locked#holdAtLeast()} holds that wait for the hold to pass: closed with
   * this acquirer (before its client, which it depends on), leaving them held on the server.
   */
  public DeferredReleases deferredReleases() {
    return deferredReleases;
  }

  /**
   * The graceful shutdown: holds whose {@link Locked#holdAtLeast()} has not passed stay held on the
   * server until then ({@link DeferredReleases#close()}); the client is not closed here.
   */
  @Override
  public void close() {
    deferredReleases.close();
  }

  /**
   * Acquires the lock of {@code pattern} and {@code key}, waiting at most {@code wait} ({@code
   * Duration.ZERO}: one attempt).
   *
   * @param pattern the lock's name pattern, of a bounded set (see {@link LockNamePatterns})
   * @param key the key, or null for a lock without one
   * @throws LockTimeoutException if another holder kept the lock for the whole wait
   * @throws BackendUnavailableException if the backend did not answer
   * @throws LockInterruptedException if the thread was interrupted (flag set, nothing held)
   */
  public Lease acquire(String pattern, @Nullable String key, Duration wait, LockOptions options) {
    DistributedLock lock = client.lock(names.lockName(pattern, key), options);
    long start = System.nanoTime();
    // One attempt first, bounded by the operation timeout and deaf to interrupts (as tryAcquire
    // is), then the wait for what is left: a free lock is granted even with a wait shorter than a
    // round trip, and a backend that does not answer is BackendUnavailableException, not a
    // timeout. Its miss is no failure of this acquisition: the metrics listener is told so.
    Optional<Lease> first;
    FIRST_ATTEMPT.set(lock.name());
    try {
      first = lock.tryAcquire();
    } finally {
      FIRST_ATTEMPT.remove();
    }
    if (first.isPresent()) {
      return first.get();
    }
    Duration left = wait.minusNanos(System.nanoTime() - start);
    if (left.isNegative() || left.isZero()) {
      left = Duration.ZERO; // one more attempt, whose miss is the failure the listener records
    }
    return lock.acquire(left);
  }

  /** The lock whose first attempt (of {@link #acquire}) this thread is making, if any. */
  private static final ThreadLocal<@Nullable String> FIRST_ATTEMPT = new ThreadLocal<>();

  /**
   * Whether this thread is making the first attempt of an {@link #acquire} of {@code lockName}: a
   * miss then is not a failure (the acquisition goes on to wait), and a metrics listener does not
   * count it.
   */
  public static boolean isFirstAttempt(String lockName) {
    return lockName.equals(FIRST_ATTEMPT.get());
  }

  /**
   * One attempt at the lock of {@code pattern} and {@code key}.
   *
   * @return the lease, or empty if another holder has it
   * @throws BackendUnavailableException if the backend did not answer
   */
  public Optional<Lease> tryAcquire(String pattern, @Nullable String key, LockOptions options) {
    return client.lock(names.lockName(pattern, key), options).tryAcquire();
  }

  /**
   * Acquires the lock of {@code pattern} and {@code key} as a grant of its own, never a re-entry of
   * one this thread holds (ShedLock's locks, {@link Locked#holdAtLeast()}: a hold that outlives the
   * call must make the thread's next call find the lock held). Waits at most {@code wait} ({@code
   * Duration.ZERO}: one attempt). No owner id is used: the grant is this call's alone, so its lease
   * can be extended and trusted like any other.
   *
   * @return the lease, or empty if another holder kept the lock for the whole wait
   * @throws BackendUnavailableException if the backend did not answer
   * @throws LockInterruptedException if the thread was interrupted (flag set, nothing held)
   */
  public Optional<Lease> acquireOwnGrant(
      String pattern, @Nullable String key, Duration wait, LockOptions options) {
    CompletableFuture<Lease> grant = acquireAsync(pattern, key, wait, options);
    try {
      return Optional.of(grant.get());
    } catch (InterruptedException e) {
      // A grant that arrives after the cancel is released by the client. One that arrived between
      // the interrupt and the cancel (which then returns false) is this call's to give back: no
      // caller will ever see it, and it would be held, and renewed, until the client closes.
      if (!grant.cancel(false) && !grant.isCompletedExceptionally()) {
        releaseUnwanted(grant.join());
      }
      Thread.currentThread().interrupt();
      throw new LockInterruptedException(
          "Interrupted while acquiring lock '" + names.lockName(pattern, key) + "'", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof LockTimeoutException) {
        return Optional.empty();
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      throw new IllegalStateException(cause);
    }
  }

  private static void releaseUnwanted(Lease lease) {
    try {
      lease.release();
    } catch (RuntimeException e) {
      // Reported by the client (its lease-lost listeners, or a warning): it expires after its
      // lease.
      org.slf4j.LoggerFactory.getLogger(LockAcquirer.class)
          .warn(
              "A lease of '{}' granted to an interrupted acquisition was not released: {}",
              lease.lockName(),
              e.toString());
    }
  }

  /**
   * Acquires the lock of {@code pattern} and {@code key} asynchronously, as a grant of its own (an
   * asynchronous acquisition is never reentrant by thread), waiting at most {@code wait}. The
   * future fails with the exceptions of {@link DistributedLock#acquire}; cancelling it leaves
   * nothing held.
   */
  public CompletableFuture<Lease> acquireAsync(
      String pattern, @Nullable String key, Duration wait, LockOptions options) {
    return client.lock(names.lockName(pattern, key), options).acquireAsync(wait);
  }
}
