package io.dlock.core;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LeasedSemaphore;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.Permit;
import io.dlock.PermitInfo;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A semaphore is a lock recipe: each acquisition of {@code count} of {@code permits} is an
 * acquisition of the unshared lock of its {@link PermitGrantName}, which {@link PermitRouting}
 * sends to the backend's permit store. Waiting, renewal, loss and late answers are the core's, as
 * for every lock. Holds no state of its own.
 */
final class NamedSemaphore implements LeasedSemaphore {
  private final SemaphoreHost host;
  private final String name;
  private final int permits;
  private final LockOptions options;

  NamedSemaphore(SemaphoreHost host, String name, int permits, LockOptions options) {
    this.host = host;
    this.name = LockNames.requireValid(name);
    this.permits = checkPermits(permits);
    this.options = checkOptions(options);
  }

  static int checkPermits(int permits) {
    if (permits < 1 || permits > MAX_PERMITS) {
      throw new IllegalArgumentException(
          "permits must be from 1 to " + MAX_PERMITS + ", but was " + permits);
    }
    return permits;
  }

  static LockOptions checkOptions(LockOptions options) {
    Objects.requireNonNull(options, "options");
    if (options.ownerId().isPresent()) {
      throw new IllegalArgumentException(
          "options: a semaphore's permits take no owner id: each permit is a grant of its own");
    }
    return options;
  }

  private int checkCount(int count) {
    if (count < 1 || count > permits) {
      throw new IllegalArgumentException(
          "count must be from 1 to the semaphore's permits (" + permits + "), but was " + count);
    }
    return count;
  }

  private String grantName(int count) {
    return new PermitGrantName(name, permits, count).grantName();
  }

  private Permit granted(Lease lease, int count) {
    host.permitGranted(grantName(count));
    return new HeldPermit(lease, name, count);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int permits() {
    return permits;
  }

  @Override
  public LockOptions options() {
    return options;
  }

  @Override
  public Optional<Permit> tryAcquire(int count) {
    checkCount(count);
    DistributedLock lock = host.permitLock(grantName(count), options);
    return lock.tryAcquire().map(lease -> granted(lease, count));
  }

  @Override
  public Permit acquire(int count, Duration wait) {
    checkCount(count);
    long waitNanos = NamedLock.checkWait(wait);
    DistributedLock lock = host.permitLock(grantName(count), options);
    try {
      return granted(lock.acquire(Duration.ofNanos(waitNanos)), count);
    } catch (LockTimeoutException e) {
      throw timeout(count, wait, e);
    }
  }

  private LockTimeoutException timeout(int count, Duration wait, Throwable cause) {
    return new LockTimeoutException(
        count
            + " of the "
            + permits
            + " permits of semaphore '"
            + name
            + "' did not come free within "
            + wait,
        cause);
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int count, Duration wait) {
    checkCount(count);
    NamedLock.checkWait(wait);
    CompletableFuture<Lease> acquisition =
        host.permitLock(grantName(count), options).acquireAsync(wait);
    CompletableFuture<Permit> result = new CompletableFuture<>();
    // A cancel of the caller's future cancels the acquisition, which gives back a grant it got.
    result.whenComplete(
        (permit, failure) -> {
          if (result.isCancelled()) {
            acquisition.cancel(false);
          }
        });
    acquisition.whenComplete(
        (lease, failure) -> {
          if (failure != null) {
            Throwable cause =
                failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause()
                    : failure;
            result.completeExceptionally(
                cause instanceof LockTimeoutException ? timeout(count, wait, cause) : cause);
          } else if (!result.complete(granted(lease, count))) {
            try {
              lease.release(); // the caller cancelled as it was granted
            } catch (RuntimeException e) {
              // Reported by the release (logged, and the permit ends with its lease).
            }
          }
        });
    return result;
  }

  @Override
  public List<PermitInfo> holders() {
    return host.callStore(store -> store.holders(name), "list the permits of '" + name + "'");
  }

  @Override
  public Optional<PermitInfo> forceRelease(long fencingToken) {
    return host.callStore(
        store -> store.forceRelease(name, fencingToken),
        "force the release of permit " + fencingToken + " of '" + name + "'");
  }

  @Override
  public String toString() {
    return "LeasedSemaphore[" + name + ", " + permits + " permits, " + options + "]";
  }
}
