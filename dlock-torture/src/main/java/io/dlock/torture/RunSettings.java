package io.dlock.torture;

import java.nio.file.Path;
import java.time.Duration;

/**
 * One run's shape.
 *
 * @param backend redis, zookeeper or postgres
 * @param scenario the fault injected
 * @param duration how long the workers contend (faults included)
 * @param workers how many worker processes contend at a time
 * @param locks how many lock names they share (fewer names, more contention)
 * @param lease the lease of every grant, renewed every third of it
 * @param directory where the histories and worker logs go
 * @param sharedOwnerIds whether workers in different processes share owner ids ({@code
 *     LockOptions.withOwnerId}): holds of one owner id's grant (same token) are then one holder
 */
record RunSettings(
    String backend,
    Scenario scenario,
    Duration duration,
    int workers,
    int locks,
    Duration lease,
    Path directory,
    boolean sharedOwnerIds) {

  RunSettings(
      String backend,
      Scenario scenario,
      Duration duration,
      int workers,
      int locks,
      Duration lease,
      Path directory) {
    this(backend, scenario, duration, workers, locks, lease, directory, false);
  }

  RunSettings {
    if (workers < 2 || workers > 16) {
      throw new IllegalArgumentException("workers must be 2..16, got " + workers);
    }
    if (locks < 1 || locks > 100) {
      throw new IllegalArgumentException("locks must be 1..100, got " + locks);
    }
    if (lease.compareTo(Duration.ofMillis(500)) < 0 || lease.compareTo(Duration.ofMinutes(1)) > 0) {
      throw new IllegalArgumentException("lease must be 500 ms..1 min, got " + lease);
    }
    if (duration.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("duration must be at least 1 s, got " + duration);
    }
  }

  /** The renewal interval: a third of the lease. */
  Duration renewal() {
    return lease.dividedBy(3);
  }

  /** How long a worker waits for a lock in one acquisition. */
  Duration workerWait() {
    return lease.multipliedBy(3);
  }

  /** A holder's critical section lasts between these, so a grant is short next to the lease. */
  long holdMinMillis() {
    return Math.max(1, lease.toMillis() / 100);
  }

  long holdMaxMillis() {
    return Math.max(2, lease.toMillis() / 20);
  }
}
