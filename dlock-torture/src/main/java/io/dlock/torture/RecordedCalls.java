package io.dlock.torture;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockException;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Optional;

/**
 * The coordinator's own clients' lock calls (the probe's, the waiter's), each written to the
 * client's history around the call as a worker writes its own, so that the checker reads them as it
 * reads a worker's: {@code ACQUIRING}, then {@code GRANT} or {@code NO_GRANT}; {@code RELEASING},
 * then {@code RELEASED} with the answer.
 */
final class RecordedCalls {
  private RecordedCalls() {}

  /**
   * Acquires {@code lock}, waiting up to {@code wait}; returns the lease, or empty if none was
   * granted (the reason is in the history).
   */
  static Optional<Lease> acquire(
      EventLog log,
      LockClient client,
      String lock,
      LockOptions options,
      Duration wait,
      String grantDetail) {
    log.append(Event.Kind.ACQUIRING, lock, 0, "");
    Lease lease;
    try {
      lease = client.lock(lock, options).acquire(wait);
    } catch (LockException e) {
      log.append(Event.Kind.NO_GRANT, lock, 0, e.toString());
      return Optional.empty();
    }
    log.append(Event.Kind.GRANT, lock, lease.fencingToken(), grantDetail);
    return Optional.of(lease);
  }

  /** Releases {@code held}: the answer is true, false, or the error. */
  static void release(EventLog log, String lock, Lease held) {
    log.append(Event.Kind.RELEASING, lock, held.fencingToken(), "");
    String result;
    try {
      result = Boolean.toString(held.release());
    } catch (LockException e) {
      result = "error " + e;
    }
    log.append(Event.Kind.RELEASED, lock, held.fencingToken(), result);
  }
}
