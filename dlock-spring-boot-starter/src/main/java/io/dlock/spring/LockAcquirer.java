package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockInterruptedException;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.spring.metrics.LockMetrics;
import io.dlock.spring.metrics.LockMetrics.FailureCause;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Takes locks for the starter's features ({@code @DistributedLock}, the Spring Integration
 * registry, the ShedLock provider): prepends {@code dlock.key-prefix} to the name, and records the
 * latency, the wait, failures and lost leases under the lock's name pattern.
 *
 * <p>A waiting acquisition first makes one attempt; only if the lock is held does it wait for the
 * rest of the wait bound. That first attempt is what tells an uncontended acquisition (wait zero)
 * from a contended one for the {@code dlock.acquire.wait} metric; it costs one more backend call
 * only when the lock is held, that is when the caller waits anyway.
 */
public final class LockAcquirer {
  private final LockClient client;
  private final LockMetrics metrics;
  private final String keyPrefix;

  /**
   * @param keyPrefix prepended to every lock name, may be empty
   */
  public LockAcquirer(LockClient client, LockMetrics metrics, String keyPrefix) {
    this.client = Objects.requireNonNull(client, "client");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
  }

  /** The client locks are taken from. */
  public LockClient client() {
    return client;
  }

  /** The full lock name for {@code name}: the key prefix, then the name. */
  public String lockName(String name) {
    return keyPrefix + name;
  }

  /**
   * Acquires {@code lockName(name)}, waiting at most {@code wait}.
   *
   * @param pattern the name pattern for metrics (bounded set of values)
   * @param name the lock name without the key prefix
   * @throws LockTimeoutException if another holder kept the lock for the whole wait
   * @throws BackendUnavailableException if the backend did not answer
   * @throws LockInterruptedException if the thread was interrupted (flag set, nothing held)
   */
  public Lease acquire(String pattern, String name, Duration wait, LockOptions options) {
    String lockName = lockName(name);
    long start = System.nanoTime();
    try {
      Optional<Lease> first = client.lock(lockName, options).tryAcquire();
      if (first.isPresent()) {
        return granted(pattern, first.get(), start, -1);
      }
      Duration left = wait.minusNanos(System.nanoTime() - start);
      if (left.isNegative() || left.isZero()) {
        throw new LockTimeoutException(
            "lock '" + lockName + "' is held by another holder (wait " + wait + ")");
      }
      long waitStart = System.nanoTime();
      Lease lease = client.lock(lockName, options).acquire(left);
      return granted(pattern, lease, start, waitStart);
    } catch (RuntimeException e) {
      metrics.failed(pattern, causeOf(e));
      throw e;
    }
  }

  /**
   * One attempt at {@code lockName(name)}.
   *
   * @return the lease, or empty if another holder has it (counted as a {@code timeout} failure)
   * @throws BackendUnavailableException if the backend did not answer
   */
  public Optional<Lease> tryAcquire(String pattern, String name, LockOptions options) {
    long start = System.nanoTime();
    Optional<Lease> lease;
    try {
      lease = client.lock(lockName(name), options).tryAcquire();
    } catch (RuntimeException e) {
      metrics.failed(pattern, causeOf(e));
      throw e;
    }
    if (lease.isEmpty()) {
      metrics.failed(pattern, FailureCause.TIMEOUT);
      return lease;
    }
    return Optional.of(granted(pattern, lease.get(), start, -1));
  }

  /** Records a grant; {@code waitStart} is -1 when the first attempt got the lock. */
  private Lease granted(String pattern, Lease lease, long start, long waitStart) {
    long now = System.nanoTime();
    metrics.acquired(
        pattern,
        Duration.ofNanos(now - start),
        waitStart == -1 ? Duration.ZERO : Duration.ofNanos(now - waitStart));
    lease.onLost(event -> metrics.leaseLost(pattern, event.reason()));
    return lease;
  }

  private static FailureCause causeOf(RuntimeException e) {
    if (e instanceof LockTimeoutException) {
      return FailureCause.TIMEOUT;
    }
    if (e instanceof BackendUnavailableException) {
      return FailureCause.BACKEND_UNAVAILABLE;
    }
    if (e instanceof LockInterruptedException) {
      return FailureCause.INTERRUPTED;
    }
    if (e instanceof LockLostException) {
      return FailureCause.LEASE_LOST;
    }
    return FailureCause.ERROR;
  }
}
