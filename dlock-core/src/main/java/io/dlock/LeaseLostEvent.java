package io.dlock;

import java.util.Objects;

/**
 * Tells a holder that its lease is gone.
 *
 * @param lockName the lock's name
 * @param fencingToken the fencing token of the lost grant
 * @param reason why the lease is known to be lost
 * @param detail a human-readable explanation, for logs
 */
public record LeaseLostEvent(String lockName, long fencingToken, Reason reason, String detail) {

  public LeaseLostEvent {
    Objects.requireNonNull(lockName, "lockName");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(detail, "detail");
  }

  /** Why a lease was lost. */
  public enum Reason {
    /** A renewal found the lock deleted, or held by another owner. */
    TAKEN_OVER,
    /** Renewal could not reach the backend before the lease ran out. */
    EXPIRED,
    /** A fixed lease (no renewal) reached its end while still held. */
    LEASE_ENDED,
    /**
     * The backend session that carried the lease ended (ZooKeeper session, database connection).
     */
    SESSION_LOST,
    /**
     * The lock client was closed while the lease was held: it released the lease (or, if the
     * backend did not answer, left it to expire) under its holder, whose work may still run.
     */
    CLIENT_CLOSED
  }
}
