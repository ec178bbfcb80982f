package io.dlock.jdbc;

import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The lock operations of one {@link JdbcLockMode}, which {@link JdbcLockBackend} hands on: {@link
 * LeaseRowLocks} (one statement on a pooled connection per call) or {@link ConnectionBoundLocks}
 * (session and row locks: each grant keeps a connection until release). The asynchronous ones are
 * called on the caller's thread and return at once; the others run inside a call of the backend.
 */
interface ModeLocks extends AutoCloseable {
  /** Whether a lock lives in one connection, and so belongs to one client (session, row). */
  boolean connectionBound();

  /** Called when the backend starts, before any grant. */
  void start(BackendContext context);

  /** Where losses found by the mode are reported (connection-bound modes only). */
  void bindEvents(BackendEvents events);

  /**
   * @param holder the description of the holder, taken on the caller's thread
   */
  CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease, String holder);

  CompletableFuture<ReleaseResult> release(String lockName, LockOwner lockOwner, long fencingToken);

  /**
   * @param leases at least one
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases);

  /**
   * The locks held now whose name matches, on {@code c}, a pooled connection of a backend call.
   *
   * @param like {@code namePattern} as a SQL {@code LIKE} pattern
   */
  List<LockInfo> inspect(Connection c, String namePattern, String like) throws SQLException;

  /** Breaks the lock of {@code lockName}, on {@code c}, a pooled connection of a backend call. */
  Optional<LockInfo> forceRelease(Connection c, String lockName) throws SQLException;

  /** Ends what the mode keeps; the backend stops its calls after. */
  @Override
  void close();
}
