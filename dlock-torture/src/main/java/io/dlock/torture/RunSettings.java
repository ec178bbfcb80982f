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
 * @param workload what the workers do: contend for locks, or stand in one election
 */
record RunSettings(
    String backend,
    Scenario scenario,
    Duration duration,
    int workers,
    int locks,
    Duration lease,
    Path directory,
    boolean sharedOwnerIds,
    Workload workload) {

  RunSettings(
      String backend,
      Scenario scenario,
      Duration duration,
      int workers,
      int locks,
      Duration lease,
      Path directory,
      boolean sharedOwnerIds) {
    this(
        backend,
        scenario,
        duration,
        workers,
        locks,
        lease,
        directory,
        sharedOwnerIds,
        Workload.LOCK);
  }

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
    if (workload != Workload.LOCK && sharedOwnerIds) {
      throw new IllegalArgumentException("an " + workload.id() + " takes no owner id");
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

  /**
   * A leader resigns after a term of between these (and competes again at once), so that terms
   * change hands without a fault too: the longer ones outlive a renewal or two, the shorter ones
   * none; and the longest ends within the lease of calm after a fault (the next fault's leader is
   * then one elected without a fault).
   */
  long termMinMillis() {
    return lease.toMillis() / 8;
  }

  long termMaxMillis() {
    return lease.toMillis() * 3 / 4;
  }

  /**
   * How long the long critical sections (and terms) of the partition scenario last: past the lease,
   * so that a holder cut off as it starts one must be told of its loss.
   */
  long longHoldMillis() {
    return lease.toMillis() * 3 / 2;
  }

  /** The longest term a leader may plan in this run's scenario. */
  long longestTermMillis() {
    return scenario == Scenario.PARTITION ? longHoldMillis() : termMaxMillis();
  }

  /**
   * The semaphore's bound in a semaphore run: two with up to five workers, three with more, so that
   * someone always waits (a worker asks for two permits now and then).
   */
  int permits() {
    return workers <= 5 ? 2 : 3;
  }

  /**
   * A permit is held between these: 0.1 to 1 s with a 2 s lease, long next to a lock's critical
   * section, so that permits overlap each other and outlive a renewal now and then.
   */
  long permitHoldMinMillis() {
    return Math.max(1, lease.toMillis() / 20);
  }

  long permitHoldMaxMillis() {
    return Math.max(2, lease.toMillis() / 2);
  }
}
