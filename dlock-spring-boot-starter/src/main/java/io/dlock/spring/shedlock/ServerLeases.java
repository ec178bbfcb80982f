package io.dlock.spring.shedlock;

import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * How long the server keeps a ShedLock lock, which is not how long the lock lasts: the adapter ends
 * every lock itself at {@code lockAtMostFor} ({@link DlockSimpleLock}); the server's lease only
 * bounds the hold should this process die, and must outlast the lock while it lives.
 *
 * <p>It is {@code lockAtMostFor} (what is left of it), but never less than a floor: the client's
 * operation timeout, plus a second and what the client takes off for clock drift. Two reasons. The
 * core takes no lease under {@link LockOptions#MIN_LEASE}, and ShedLock allows any {@code
 * lockAtMostFor} down to zero. And the core gives back a grant whose answer arrives after its lease
 * ran out, reporting the backend unavailable, although it answered: with a lease that outlasts the
 * longest answer the client waits for, every grant answered in time is handed out, and one answered
 * after {@code lockAtMostFor} is a lock that has already ended (as ShedLock's own providers have
 * it). So a lock shorter than the floor is held on the server for the floor should this process die
 * (on Redis and the JDBC lease rows; ZooKeeper and the database session modes end it with the
 * session), and for exactly {@code lockAtMostFor} otherwise.
 *
 * <p>Above {@link LockOptions#MAX_LEASE} (ShedLock allows centuries) no fixed lease is long enough:
 * the lease is then renewed by the client, with that length, until the adapter ends the lock.
 */
final class ServerLeases {
  /** Beyond the operation timeout: the time before the core starts waiting for the answer. */
  private static final Duration SLACK = Duration.ofSeconds(1);

  private final Duration floor;

  /**
   * @param operationTimeout the client's: the longest it waits for an answer
   */
  ServerLeases(Duration operationTimeout) {
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    if (operationTimeout.isNegative()
        || operationTimeout.isZero()
        || operationTimeout.compareTo(LockClientOptions.MAX_OPERATION_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "operationTimeout must be positive and at most "
              + LockClientOptions.MAX_OPERATION_TIMEOUT
              + ", but was "
              + operationTimeout);
    }
    // The client trusts a lease of L for L - (1% of L + 2 ms) from the moment it sent the request:
    // ask for enough that the trusted part covers the timeout and the slack.
    long wanted = operationTimeout.plus(SLACK).toNanos() + 2_000_000L;
    this.floor = Duration.ofNanos(wanted + wanted / 99 + 1);
  }

  /** The shortest lease the server is given. */
  Duration floor() {
    return floor;
  }

  /** The lease of a new grant whose lock is to last {@code untilEnd} more. */
  LockOptions forGrant(Duration untilEnd) {
    if (untilEnd.compareTo(LockOptions.MAX_LEASE) > 0) {
      return LockOptions.defaults().withRenewedLease(LockOptions.MAX_LEASE);
    }
    return LockOptions.defaults().withFixedLease(atLeastFloor(untilEnd));
  }

  /**
   * The lease an extension sets, for a lock that is to last {@code lockAtMostFor} from now.
   *
   * @param renewed whether the grant's lease is renewed by the client
   * @throws IllegalArgumentException if {@code lockAtMostFor} is longer than a fixed lease can be,
   *     and the grant's lease is fixed (taken for a {@code lockAtMostFor} of at most {@link
   *     LockOptions#MAX_LEASE}): its renewal cannot be started afterwards
   */
  Duration forExtension(String name, Duration lockAtMostFor, boolean renewed) {
    if (lockAtMostFor.compareTo(LockOptions.MAX_LEASE) > 0) {
      if (!renewed) {
        throw new IllegalArgumentException(
            "lock '"
                + name
                + "' cannot be extended by more than "
                + LockOptions.MAX_LEASE
                + " (was "
                + lockAtMostFor
                + "): it was taken with a lockAtMostFor of at most that; take it with a longer"
                + " one");
      }
      return LockOptions.MAX_LEASE;
    }
    return atLeastFloor(lockAtMostFor);
  }

  private Duration atLeastFloor(Duration lease) {
    return lease.compareTo(floor) < 0 ? floor : lease;
  }
}
