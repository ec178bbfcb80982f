package io.dlock.jdbc;

/** How a JDBC lock client keeps its locks in the database. */
public enum JdbcLockMode {
  /**
   * One row per held lock with owner, hold count, fencing token and an expiry computed by the
   * database's clock. Acquire, release and renewal are single atomic statements on a pooled
   * connection that is returned right after; no connection is kept while a lock is held. A holder
   * that dies without releasing blocks the lock until its lease runs out, by the database's clock.
   */
  LEASE_ROW
}
