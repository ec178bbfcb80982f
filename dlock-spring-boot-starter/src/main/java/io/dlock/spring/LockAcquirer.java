package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Takes locks for the starter's features ({@code @Locked}, the ShedLock provider) under names built
 * by {@link LockNamePatterns}: {@code dlock.key-prefix + pattern}, followed by {@code ":" + key}
 * when there is a key. Building the name there is what lets the client's metrics listener tag the
 * lock with its pattern; the metrics themselves come from the client's {@link
 * io.dlock.LockEventListener}, like those of every other lock of the client.
 */
public final class LockAcquirer {
  private final LockClient client;
  private final LockNamePatterns names;

  public LockAcquirer(LockClient client, LockNamePatterns names) {
    this.client = Objects.requireNonNull(client, "client");
    this.names = Objects.requireNonNull(names, "names");
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
    return client.lock(names.lockName(pattern, key), options).acquire(wait);
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
}
