package io.dlock.examples.mysql;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.jdbc.JdbcLockMode;
import io.dlock.jdbc.JdbcLockSettings;
import io.dlock.jdbc.JdbcLocks;

/**
 * The articles' lock table done right: dlock-jdbc's lease rows ({@link JdbcLockMode#LEASE_ROW}) in
 * the table {@value #TABLE} of the application's MariaDB (or PostgreSQL, or H2).
 *
 * <pre>{@code
 * try (LockClient locks = LeaseRowLockTable.newClient(url)) {
 *   try (Lease lease = locks.lock("stock:" + sku).acquire(Duration.ofSeconds(2))) {
 *     long stock = fencedStock.stock(sku);
 *     fencedStock.write(sku, stock - quantity, lease.fencingToken()); // refused if stale
 *   } // released, only if still this grant's
 * }
 * }</pre>
 *
 * <p>What each flaw of {@link FlawedLockTable} becomes:
 *
 * <ul>
 *   <li>No expiry: every row has a lease end computed and compared by the database's clock ({@code
 *       UTC_TIMESTAMP(6)}), renewed by the client while its holder lives; a crashed holder stops
 *       renewing and the next acquirer takes the expired row over in the same statement that would
 *       insert it. No cleanup job is needed for correctness.
 *   <li>Unlock without owner: release deletes only the row of the caller's own grant (owner and
 *       fencing token) whose lease has not ended; anyone else's release changes nothing and says so
 *       ({@code false}). Release lives on the {@link io.dlock.Lease} a caller got, so a caller that
 *       got none has nothing to release.
 *   <li>A live holder losing the lock: it is told ({@link io.dlock.Lease#onLost}), its late release
 *       leaves the new holder's row alone, and its {@link io.dlock.Lease#fencingToken()} is lower
 *       than the new holder's, so a resource that checks tokens ({@link FencedStock}) refuses its
 *       late writes.
 *   <li>Waiting without bound: {@link io.dlock.DistributedLock#acquire(java.time.Duration)} waits
 *       at most the given time (jittered backoff on MariaDB, bounded by the holder's remaining
 *       lease) and then throws {@link io.dlock.LockTimeoutException}.
 * </ul>
 */
public final class LeaseRowLockTable {
  /** The lease table; dlock also uses the sequence {@code ex_lease_locks_fence}. */
  public static final String TABLE = "ex_lease_locks";

  private LeaseRowLockTable() {}

  /**
   * The settings: lease rows in {@value #TABLE}, created if missing (an application would rather
   * run the DDL of {@code io/dlock/jdbc/schema/mariadb-v1.sql} and {@code -v2.sql} with its
   * migrations).
   */
  public static JdbcLockSettings settings(String jdbcUrl) {
    return JdbcLockSettings.of(jdbcUrl)
        .withMode(JdbcLockMode.LEASE_ROW)
        .withTable(TABLE)
        .withCreateSchema(true);
  }

  /** A client on the database of {@code jdbcUrl}; one per application, closed at its end. */
  public static LockClient newClient(String jdbcUrl) {
    return JdbcLocks.newClient(settings(jdbcUrl), LockClientOptions.defaults());
  }
}
