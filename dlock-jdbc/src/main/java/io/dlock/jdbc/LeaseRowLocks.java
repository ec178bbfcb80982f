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
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * {@link JdbcLockMode#LEASE_ROW}: every primitive is one atomic statement on a pooled connection,
 * run on the backend's call executor; the connection goes back to the pool right after. A lock is a
 * row, lease and hold count included, so an owner id's holds are the same from every client.
 */
final class LeaseRowLocks implements ModeLocks {
  private static final int RENEW_BATCH = 500;

  private final LockStatements statements;
  private final JdbcCalls calls;

  /** Releases of grant owners asked for and not yet answered. */
  private final PendingReleases pendingReleases = new PendingReleases();

  LeaseRowLocks(LockStatements statements, JdbcCalls calls) {
    this.statements = statements;
    this.calls = calls;
  }

  @Override
  public boolean connectionBound() {
    return false;
  }

  @Override
  public void start(BackendContext context) {}

  @Override
  public void bindEvents(BackendEvents events) {}

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease, String holder) {
    String owner = lockOwner.key();
    boolean countsHolds = lockOwner.countsHolds();
    if (!countsHolds && pendingReleases.pending(lockName, owner)) {
      // The same per-grant owner asks again while its release has not been answered (the core
      // undid a grant whose request saw its session lost, and retries): re-entering the row now
      // would hand out the grant that the pending release then deletes. It is held until then.
      return CompletableFuture.completedFuture(new AcquireResult.Held(PendingReleases.RETRY));
    }
    return calls
        .call(
            "acquire '" + lockName + "'",
            c -> statements.acquire(c, lockName, owner, countsHolds, holder, lease.toMillis()))
        .exceptionallyCompose(failure -> GrantToUndo.undoElsewhere(calls, lockName, failure));
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner lockOwner, long fencingToken) {
    String owner = lockOwner.key();
    if (lockOwner.countsHolds()) {
      // An owner id's hold count lives in the row: a re-entry and a release are ordered there.
      return calls.call(
          "release '" + lockName + "'", c -> statements.release(c, lockName, owner, fencingToken));
    }
    return pendingReleases.track(
        lockName,
        owner,
        () ->
            calls.call(
                "release '" + lockName + "'",
                c -> statements.release(c, lockName, owner, fencingToken)));
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return calls.call(
        "renew " + leases.size() + " lease(s)",
        c -> {
          Set<HeldLease> gone = new HashSet<>();
          for (int from = 0; from < leases.size(); from += RENEW_BATCH) {
            List<HeldLease> batch =
                leases.subList(from, Math.min(leases.size(), from + RENEW_BATCH));
            for (int position : statements.renew(c, batch)) {
              gone.add(batch.get(position));
            }
          }
          return gone;
        });
  }

  /** The unexpired rows. */
  @Override
  public List<LockInfo> inspect(Connection c, String namePattern, String like) throws SQLException {
    return statements.inspect(c, namePattern);
  }

  /** Deletes the row. */
  @Override
  public Optional<LockInfo> forceRelease(Connection c, String lockName) throws SQLException {
    return statements.forceRelease(c, lockName);
  }

  @Override
  public void close() {}
}
