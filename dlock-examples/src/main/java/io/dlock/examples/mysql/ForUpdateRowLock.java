package io.dlock.examples.mysql;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.jdbc.JdbcLockMode;
import io.dlock.jdbc.JdbcLockSettings;
import io.dlock.jdbc.JdbcLocks;

/**
 * The articles' {@code SELECT ... FOR UPDATE} lock done right: dlock-jdbc's row mode ({@link
 * JdbcLockMode#ROW}) with the table {@value #TABLE} (and {@code ex_row_locks_rows}, {@code
 * ex_row_locks_held}, the sequence {@code ex_row_locks_fence}).
 *
 * <p>What each flaw of the articles' samples becomes:
 *
 * <ul>
 *   <li>The lock ends with its transaction ({@link FlawedAutocommitRowLock}): each grant gets a
 *       connection of its own, with autocommit off, and its transaction stays open until the
 *       release commits it; nothing else runs on that connection.
 *   <li>The lock belongs to a shared connection ({@link FlawedRowLock}): the holder is the calling
 *       thread (or an explicit owner id); another thread of the same client asks the database like
 *       a stranger and is refused while the row is locked.
 *   <li>An empty result taken for the lock ({@link FlawedEmptyResultRowLock}): the lock's row is
 *       inserted first (in its own transaction), then locked with {@code FOR UPDATE NOWAIT}; a lock
 *       is granted only when that statement returns the row. No gap lock is ever mistaken for a
 *       lock.
 *   <li>Waits without bound and swallowed errors: {@code NOWAIT} never queues inside the database,
 *       {@link io.dlock.DistributedLock#acquire(java.time.Duration)} retries with backoff up to the
 *       caller's wait and then throws {@link io.dlock.LockTimeoutException}; a database error is a
 *       {@link io.dlock.BackendUnavailableException}, never taken for "try again".
 *   <li>A crashed holder: its connection dies, the database rolls its transaction back and frees
 *       the row; the lease still bounds a holder whose connection hangs silently.
 * </ul>
 *
 * <p>Each held lock keeps a connection and a transaction open: see {@code docs/jdbc.md} for the
 * costs ({@code maxHeldLocks}, DDL on the table waits for holders).
 */
public final class ForUpdateRowLock {
  /** The table of grant records; the locked rows are in {@code ex_row_locks_rows}. */
  public static final String TABLE = "ex_row_locks";

  private ForUpdateRowLock() {}

  /** The settings: row mode on {@value #TABLE}, created if missing. */
  public static JdbcLockSettings settings(String jdbcUrl) {
    return JdbcLockSettings.of(jdbcUrl)
        .withMode(JdbcLockMode.ROW)
        .withTable(TABLE)
        .withCreateSchema(true);
  }

  /** A client on the database of {@code jdbcUrl}; one per application, closed at its end. */
  public static LockClient newClient(String jdbcUrl) {
    return JdbcLocks.newClient(settings(jdbcUrl), LockClientOptions.defaults());
  }
}
