package io.dlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.BackendUnavailableException;
import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The JDBC {@link LockBackend}. In {@link JdbcLockMode#LEASE_ROW} mode every primitive is one
 * atomic statement on a pooled connection, run on a small executor of its own so that no caller
 * blocks; the connection goes back to the pool right after. In the connection-bound modes ({@link
 * JdbcLockMode#SESSION}, {@link JdbcLockMode#ROW}) each grant keeps a connection until release;
 * {@link HeldLocks} watches those connections and the leases.
 *
 * <p>Guarantees: at most one owner holds a name at a time as long as the database is consistent; a
 * lease ends by the database's clock, never a client's; fencing tokens come from a database
 * sequence and so strictly increase per name, also after expiry or a deleted row. On PostgreSQL,
 * waiters are woken by {@code NOTIFY} on release; elsewhere the core retries with capped backoff.
 *
 * <p>Failures: a call that cannot reach the database, or that the database refuses, completes with
 * {@link BackendUnavailableException} naming the operation and the SQL state. A bad setup (missing
 * table or sequence, missing privileges) is reported at {@link #connect} with how to fix it.
 */
public final class JdbcLockBackend
    implements LockBackend, ReleaseSignals, SessionBoundHolds, LockAdministration {
  private static final AtomicInteger IDS = new AtomicInteger();

  private final JdbcLockSettings settings;
  private final DataSource dataSource;
  private final @Nullable HikariDataSource ownPool;
  private final LockStatements statements;
  private final JdbcCalls calls;
  private final Map<String, ReleaseListener> releaseListeners = new ConcurrentHashMap<>();
  private final @Nullable PostgresReleaseSignals signals;
  private final ModeLocks locks;
  private final @Nullable LeaseRowPermits permits;

  private JdbcLockBackend(
      JdbcLockSettings settings,
      DataSource dataSource,
      @Nullable HikariDataSource ownPool,
      JdbcDialect dialect,
      LockStatements statements,
      @Nullable HeldLockStatements heldStatements,
      @Nullable PermitStatements permitStatements) {
    this.settings = settings;
    this.dataSource = dataSource;
    this.ownPool = ownPool;
    this.statements = statements;
    int id = IDS.incrementAndGet();
    this.calls = new JdbcCalls(settings, dataSource, statements, "dlock-jdbc-" + id);
    PooledConnections pooled = new PooledConnections(dataSource, settings);
    Optional<String> channel = dialect.releaseChannel(settings.table());
    this.signals =
        channel.isPresent()
            ? new PostgresReleaseSignals(
                dataSource,
                channel.get(),
                this::listenerOf,
                this::wakeAllWatchers,
                pooled::discard,
                "dlock-jdbc-" + id + "-signals",
                SocketTimeouts.millis(settings))
            : null;
    this.permits =
        permitStatements == null ? null : new LeaseRowPermits(permitStatements, calls, signals);
    this.locks =
        heldStatements == null
            ? new LeaseRowLocks(statements, calls)
            : new ConnectionBoundLocks(
                heldStatements, pooled, settings, "dlock-jdbc-" + id + "-heartbeat", calls);
  }

  /** The statements of a connection-bound mode on this dialect; none for lease rows. */
  private static @Nullable HeldLockStatements heldStatementsFor(
      JdbcLockSettings settings, JdbcDialect dialect, Connection c) throws SQLException {
    String table = settings.table();
    Duration timeout = settings.statementTimeout();
    return switch (settings.mode()) {
      case LEASE_ROW -> null;
      case SESSION -> dialect.sessionLockStatements(table, timeout, c);
      case ROW -> dialect.rowLockStatements(table, timeout, c);
    };
  }

  /**
   * Connects, detects the dialect, creates the schema if asked, and checks that the table can be
   * read and written.
   *
   * @throws BackendUnavailableException if the database cannot be reached
   * @throws IllegalStateException if the table or sequence is missing or the user lacks privileges;
   *     the message says which and how to fix it
   * @throws IllegalArgumentException if the database is not one of the supported dialects
   */
  public static JdbcLockBackend connect(JdbcLockSettings settings) {
    HikariDataSource ownPool = null;
    DataSource dataSource = settings.dataSource();
    if (dataSource == null) {
      ownPool = PooledConnections.pool(settings, "dlock-jdbc-" + IDS.get());
      dataSource = ownPool;
    }
    try (Connection c = dataSource.getConnection()) {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      JdbcDialect dialect = JdbcDialect.detect(c, settings.database());
      LockStatements statements =
          dialect.leaseRowStatements(settings.table(), settings.statementTimeout());
      HeldLockStatements held = heldStatementsFor(settings, dialect, c);
      // Semaphores are lease rows: the connection-bound modes have none (the core refuses them).
      PermitStatements permitStatements =
          held == null
              ? dialect.permitStatements(settings.table(), settings.statementTimeout())
              : null;
      List<String> modeProbes = held != null ? held.probes() : permitStatements.probes();
      if (settings.createSchema() && statements.surelyMissing(c)) {
        // A fresh database: created without probing first, whose failed statement MariaDB's
        // driver logs as a WARN on every such start (found by a new user).
        JdbcSchema.createSchema(c, statements);
      } else if (settings.createSchema()) {
        try {
          JdbcSchema.probe(c, statements, modeProbes);
        } catch (LockStatements.SchemaProblem missing) {
          if (!missing.creatable()) {
            throw missing; // creating this dialect's tables would break the other dialect's clients
          }
          // Only then: DDL takes exclusive metadata locks, which wait for every open transaction
          // on the tables (a row lock held by another client, on MariaDB).
          JdbcSchema.createSchema(c, statements);
        }
      }
      JdbcSchema.probe(c, statements, modeProbes);
      return new JdbcLockBackend(
          settings, dataSource, ownPool, dialect, statements, held, permitStatements);
    } catch (SQLException e) {
      closeQuietly(ownPool);
      throw new BackendUnavailableException(
          "Cannot connect to the lock database at "
              + settings.describeTarget()
              + ": "
              + JdbcCalls.describe(e),
          e);
    } catch (LockStatements.SchemaProblem e) {
      closeQuietly(ownPool);
      throw new JdbcSchemaException(
          "The lock database at " + settings.describeTarget() + " is not set up: " + e.getMessage(),
          e,
          e.creatable() && !settings.createSchema());
    } catch (RuntimeException e) {
      closeQuietly(ownPool);
      throw e;
    }
  }

  /** The numbers of the backend's own pool (null with an application's data source); for tests. */
  com.zaxxer.hikari.@Nullable HikariPoolMXBean poolStats() {
    return ownPool == null ? null : ownPool.getHikariPoolMXBean();
  }

  LockStatements statements() {
    return statements;
  }

  DataSource dataSource() {
    return dataSource;
  }

  /** The dialect in use: {@code PostgreSQL}, {@code MariaDB}, {@code MySQL} or {@code H2}. */
  public String dialect() {
    return statements.dialect();
  }

  @Override
  public String name() {
    return "jdbc";
  }

  @Override
  public void start(BackendContext context) {
    locks.start(context);
    if (permits != null) {
      permits.useClock(context.clock());
    }
  }

  /** The mode in use. */
  public JdbcLockMode mode() {
    return settings.mode();
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease) {
    // On the caller's thread: the holder is the thread that acquires, not the executor's.
    String holder = HolderDescription.of(lockOwner);
    return locks.tryAcquire(lockName, lockOwner, lease, holder);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner lockOwner, long fencingToken) {
    return locks.release(lockName, lockOwner, fencingToken);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    if (leases.isEmpty()) {
      return CompletableFuture.completedFuture(Set.of());
    }
    return locks.renew(leases);
  }

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
    if (signals == null) {
      return CompletableFuture.completedFuture(null);
    }
    releaseListeners.put(lockName, listener);
    return signals.ready();
  }

  @Override
  public void unwatchReleases(String lockName) {
    releaseListeners.remove(lockName);
  }

  /** PostgreSQL's LISTEN/NOTIFY; none on MariaDB and H2, whose waiters back off and retry. */
  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return signals != null ? Optional.of(this) : Optional.empty();
  }

  /** The connection-bound modes (session and row locks): a lock lives in one connection. */
  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return locks.connectionBound() ? Optional.of(this) : Optional.empty();
  }

  /**
   * Leased semaphores, in lease-row mode only ({@code <table>_permits} and {@code
   * <table>_semaphores}); the connection-bound modes have none, and the client refuses {@code
   * semaphore(..)} there.
   */
  @Override
  public Optional<PermitStore> permits() {
    return Optional.ofNullable(permits);
  }

  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(this);
  }

  /** False in the connection-bound modes: a lock belongs to the connection of one client. */
  @Override
  public boolean sharesOwnerIdsAcrossClients() {
    return !locks.connectionBound();
  }

  @Override
  public void bindEvents(BackendEvents events) {
    locks.bindEvents(events);
  }

  /**
   * The locks held now, by the database: unexpired lease rows; in session mode the recorded grants
   * whose lock the database shows held by the recorded connection ({@code pg_locks}, {@code
   * IS_USED_LOCK}); in row mode the recorded grants whose connection is still open.
   */
  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    String like = LockStatements.likePattern(namePattern);
    return calls.call(
        "list locks matching '" + namePattern + "'", c -> locks.inspect(c, namePattern, like));
  }

  /**
   * Breaks a lock. Lease rows: deletes the row. Session and row modes: ends the holder's connection
   * on the server ({@code pg_terminate_backend}, {@code KILL CONNECTION}, H2 {@code ABORT_SESSION};
   * the database user needs the right to) and waits until the database has freed the lock. The
   * holder learns it at its next renewal or heartbeat.
   */
  @Override
  public CompletableFuture<Optional<LockInfo>> forceRelease(String lockName) {
    return calls.call(
        "force the release of '" + lockName + "'", c -> locks.forceRelease(c, lockName));
  }

  /** The listener of a NOTIFY payload: a semaphore's (see PostgresPermitStatements) or a lock's. */
  private @Nullable ReleaseListener listenerOf(String payload) {
    LeaseRowPermits store = permits;
    ReleaseListener permitListener = store == null ? null : store.listenerOf(payload);
    return permitListener != null ? permitListener : releaseListeners.get(payload);
  }

  private void wakeAllWatchers() {
    for (ReleaseListener listener : releaseListeners.values()) {
      listener.released(null);
    }
    if (permits != null) {
      permits.wakeAll();
    }
  }

  /**
   * Deletes the rows whose lease ran out more than {@code olderThan} ago, by the database's clock.
   * Never needed for correctness (an expired row is taken over by the next acquirer); it only keeps
   * the table small when many names are used once by holders that died.
   *
   * @return the number of rows deleted
   */
  public CompletableFuture<Integer> purgeExpired(Duration olderThan) {
    if (olderThan.isNegative()) {
      throw new IllegalArgumentException("olderThan must be zero or more, but was " + olderThan);
    }
    return calls.call("purge expired rows", c -> statements.purgeExpired(c, olderThan.toMillis()));
  }

  /** Deletes the row of {@code lockName}, whoever holds it: an operator's tool, and for tests. */
  CompletableFuture<Integer> deleteRow(String lockName) {
    return calls.call("delete '" + lockName + "'", c -> statements.delete(c, lockName));
  }

  private static void closeQuietly(@Nullable HikariDataSource pool) {
    if (pool != null) {
      pool.close();
    }
  }

  /** Stops the executor, the release signals and the backend's own pool (not a given one). */
  @Override
  public void close() {
    if (!calls.refuseCalls()) {
      return;
    }
    if (signals != null) {
      signals.close();
    }
    // Calls in flight first (bounded by the statement timeout): a connection-bound acquisition that
    // is still running would otherwise store its grant after the held locks were dropped, and keep
    // a lock and a connection nobody releases.
    calls.stop();
    locks.close();
    closeQuietly(ownPool);
  }
}
