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
 * The connection-bound modes ({@link JdbcLockMode#SESSION}, {@link JdbcLockMode#ROW}): each grant
 * keeps a connection until release; {@link HeldLocks} watches those connections and the leases.
 * Acquisition and renewal run on the backend's call executor, release on HeldLocks' own.
 */
final class ConnectionBoundLocks implements ModeLocks {
  private final HeldLockStatements statements;
  private final HeldLocks held;
  private final JdbcCalls calls;

  ConnectionBoundLocks(
      HeldLockStatements statements,
      HeldLocks.Connections connections,
      JdbcLockSettings settings,
      String heartbeatThreadName,
      JdbcCalls calls) {
    this.statements = statements;
    this.calls = calls;
    this.held =
        new HeldLocks(
            statements,
            connections,
            networkTimeout(settings),
            settings.maxHeldLocks(),
            settings.heartbeatInterval(),
            heartbeatThreadName);
  }

  /**
   * The network timeout of a grant connection: past the statement timeout (every statement on it is
   * short: a try-lock, a heartbeat, an unlock), so only a silent socket reaches it; the same as the
   * backend's calls have ({@link SocketTimeouts#millis}).
   */
  static Duration networkTimeout(JdbcLockSettings settings) {
    return Duration.ofMillis(SocketTimeouts.millis(settings));
  }

  @Override
  public boolean connectionBound() {
    return true;
  }

  @Override
  public void start(BackendContext context) {
    held.useClock(context.clock());
  }

  @Override
  public void bindEvents(BackendEvents events) {
    held.bindEvents(events);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease, String holder) {
    String owner = lockOwner.key();
    boolean countsHolds = lockOwner.countsHolds();
    long calledAt = held.now(); // on the caller's thread: the core counts the lease from about now
    return calls.run(
        "acquire '" + lockName + "'",
        () -> held.tryAcquire(lockName, owner, countsHolds, lease.toMillis(), holder, calledAt));
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner lockOwner, long fencingToken) {
    String owner = lockOwner.key();
    held.releaseRequested(lockName, owner, lockOwner.countsHolds(), fencingToken);
    // Not on the call executor: an unlock stuck on a silent socket (until the network timeout)
    // must not take a thread that another holder's renewal needs.
    return calls.run(
        "release '" + lockName + "'",
        () -> held.release(lockName, owner, fencingToken),
        held.ioExecutor());
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return calls.run("renew " + leases.size() + " lease(s)", () -> held.renew(leases));
  }

  /**
   * In session mode the recorded grants whose lock the database shows held by the recorded
   * connection; in row mode the recorded grants whose connection is still open.
   */
  @Override
  public List<LockInfo> inspect(Connection c, String namePattern, String like) throws SQLException {
    return statements.inspect(c, like);
  }

  /**
   * Ends the holder's connection on the server and waits until the database has freed the lock (see
   * {@link JdbcLockBackend#forceRelease}).
   */
  @Override
  public Optional<LockInfo> forceRelease(Connection c, String lockName) throws SQLException {
    Optional<HeldLockStatements.Holder> holder = statements.holderOf(c, lockName);
    if (holder.isPresent()) {
      statements.endSession(c, lockName, holder.get().sessionId());
      // Breaking the lock breaks its record too: the next grant need not wait for the
      // recorded lease end (the holder learns of it at its next heartbeat or renewal).
      statements.clearRecord(c, lockName, holder.get().info().fencingToken());
    }
    return holder.map(HeldLockStatements.Holder::info);
  }

  @Override
  public void close() {
    held.close();
  }
}
