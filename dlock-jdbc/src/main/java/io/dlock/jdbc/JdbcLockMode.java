package io.dlock.jdbc;

/**
 * How a JDBC lock client keeps its locks in the database. All clients of one table use one mode.
 */
public enum JdbcLockMode {
  /**
   * One row per held lock with owner, hold count, fencing token and an expiry computed by the
   * database's clock. Acquire, release and renewal are single atomic statements on a pooled
   * connection that is returned right after; no connection is kept while a lock is held. A holder
   * that dies without releasing blocks the lock until its lease runs out, by the database's clock.
   */
  LEASE_ROW,

  /**
   * A session-level lock of the database held on a connection of its own for each grant: PostgreSQL
   * {@code pg_try_advisory_lock(bigint)} on a 64-bit hash of the name, MariaDB {@code GET_LOCK}.
   * The database frees it when that connection dies, so a crashed holder blocks nobody; the holder
   * learns of a dead connection within a heartbeat interval. The lease still bounds the hold: a
   * lock not renewed before its lease ends is released by the client. Not on H2 (no advisory
   * locks). An owner id re-enters only within the client that holds the lock.
   */
  SESSION,

  /**
   * A row of {@code <table>_rows} locked with {@code SELECT ... FOR UPDATE NOWAIT} in a transaction
   * kept open on a connection of its own for each grant; release commits. The database frees it
   * when the connection dies (the transaction rolls back). On PostgreSQL, MariaDB and H2. An owner
   * id re-enters only within the client that holds the lock.
   */
  ROW
}
