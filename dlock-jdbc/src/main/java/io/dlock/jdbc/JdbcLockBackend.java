package io.dlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.BackendUnavailableException;
import io.dlock.LockInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.Failures;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
  private static final Logger log = LoggerFactory.getLogger(JdbcLockBackend.class);
  private static final AtomicInteger IDS = new AtomicInteger();
  private static final int RENEW_BATCH = 500;

  private final JdbcLockSettings settings;
  private final DataSource dataSource;
  private final @Nullable HikariDataSource ownPool;
  private final LockStatements statements;
  private final ExecutorService executor;
  private final Map<String, ReleaseListener> releaseListeners = new ConcurrentHashMap<>();
  private final @Nullable PostgresReleaseSignals signals;
  private final @Nullable HeldLockStatements heldStatements;
  private final @Nullable HeldLocks heldLocks;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final PooledConnections pooled = new PooledConnections();

  /** Lease rows: releases of per-grant ({@code t:}) owners asked for and not yet answered. */
  private final Set<String> pendingReleases = ConcurrentHashMap.newKeySet();

  private JdbcLockBackend(
      JdbcLockSettings settings,
      DataSource dataSource,
      @Nullable HikariDataSource ownPool,
      JdbcDialect dialect,
      LockStatements statements,
      @Nullable HeldLockStatements heldStatements) {
    this.settings = settings;
    this.dataSource = dataSource;
    this.ownPool = ownPool;
    this.statements = statements;
    this.heldStatements = heldStatements;
    int id = IDS.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            settings.maxConcurrentCalls(),
            settings.maxConcurrentCalls(),
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "dlock-jdbc-" + id + "-call-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    ((ThreadPoolExecutor) executor).allowCoreThreadTimeOut(true);
    Optional<String> channel = dialect.releaseChannel(settings.table());
    this.signals =
        channel.isPresent()
            ? new PostgresReleaseSignals(
                dataSource,
                channel.get(),
                releaseListeners::get,
                this::wakeAllWatchers,
                pooled::discard,
                "dlock-jdbc-" + id + "-signals")
            : null;
    this.heldLocks =
        heldStatements == null
            ? null
            : new HeldLocks(
                heldStatements,
                pooled,
                networkTimeout(settings),
                settings.maxHeldLocks(),
                settings.heartbeatInterval(),
                "dlock-jdbc-" + id + "-heartbeat");
  }

  /**
   * The network timeout of a grant connection: past the statement timeout (every statement on it is
   * short: a try-lock, a heartbeat, an unlock), so only a silent socket reaches it.
   */
  static Duration networkTimeout(JdbcLockSettings settings) {
    return settings.statementTimeout().plusSeconds(1);
  }

  /** Connections for held locks: from the pool, discarded physically, probed apart from it. */
  private final class PooledConnections implements HeldLocks.Connections {
    @Override
    public Connection open() throws SQLException {
      return dataSource.getConnection();
    }

    @Override
    public void discard(Connection c) {
      if (dataSource instanceof HikariDataSource hikari) {
        hikari.evictConnection(c); // closes the physical connection now
        return;
      }
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException e) {
        log.debug("abort of a held-lock connection failed: {}", e.toString());
      }
      try {
        c.close();
      } catch (SQLException e) {
        log.debug("close of a held-lock connection failed: {}", e.toString());
      }
    }

    @Override
    public boolean reachable() {
      int seconds = (int) Math.max(1, settings.connectTimeout().toSeconds());
      String url = settings.url();
      try (Connection c =
          url != null
              ? java.sql.DriverManager.getConnection(url, probeProperties(settings))
              : dataSource.getConnection()) {
        return c.isValid(seconds);
      } catch (SQLException e) {
        return false;
      }
    }
  }

  /** Driver properties for a connection outside the pool, bounded like the pool's. */
  private static java.util.Properties probeProperties(JdbcLockSettings settings) {
    java.util.Properties props = new java.util.Properties();
    String user = settings.username();
    char[] password = settings.password();
    if (user != null && password != null) {
      props.setProperty("user", user);
      props.setProperty("password", new String(password));
    }
    long connectMillis = settings.connectTimeout().toMillis();
    String url = String.valueOf(settings.url());
    String seconds = Long.toString(Math.max(1, (connectMillis + 999) / 1000));
    if (url.startsWith("jdbc:postgresql:")) {
      props.setProperty("connectTimeout", seconds);
      props.setProperty("loginTimeout", seconds);
      props.setProperty("tcpKeepAlive", "true");
    } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      props.setProperty("connectTimeout", Long.toString(connectMillis));
    }
    return props;
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
      ownPool = pool(settings);
      dataSource = ownPool;
    }
    try (Connection c = dataSource.getConnection()) {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      JdbcDialect dialect = JdbcDialect.detect(c);
      LockStatements statements =
          dialect.leaseRowStatements(settings.table(), settings.statementTimeout());
      HeldLockStatements held = heldStatementsFor(settings, dialect, c);
      if (settings.createSchema()) {
        try {
          probe(c, statements, held);
        } catch (LockStatements.SchemaProblem missing) {
          // Only then: DDL takes exclusive metadata locks, which wait for every open transaction
          // on the tables (a row lock held by another client, on MariaDB).
          createSchema(c, statements);
        }
      }
      probe(c, statements, held);
      return new JdbcLockBackend(settings, dataSource, ownPool, dialect, statements, held);
    } catch (SQLException e) {
      closeQuietly(ownPool);
      throw new BackendUnavailableException(
          "Cannot connect to the lock database at "
              + settings.describeTarget()
              + ": "
              + describe(e),
          e);
    } catch (LockStatements.SchemaProblem e) {
      closeQuietly(ownPool);
      throw new IllegalStateException(
          "The lock database at " + settings.describeTarget() + " is not set up: " + e.getMessage(),
          e);
    } catch (RuntimeException e) {
      closeQuietly(ownPool);
      throw e;
    }
  }

  private static HikariDataSource pool(JdbcLockSettings settings) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("dlock-jdbc-" + IDS.get());
    config.setJdbcUrl(settings.url());
    String user = settings.username();
    char[] password = settings.password();
    if (user != null && password != null) {
      config.setUsername(user);
      config.setPassword(new String(password));
    }
    long connectMillis = settings.connectTimeout().toMillis();
    // One connection per concurrent call, plus one for PostgreSQL's LISTEN, plus one per held lock
    // in the connection-bound modes.
    config.setMaximumPoolSize(
        settings.maxConcurrentCalls()
            + 1
            + (settings.mode() == JdbcLockMode.LEASE_ROW ? 0 : settings.maxHeldLocks()));
    // Connection-bound modes take a connection per grant (and row mode a second one to record
    // it): keep some ready, so that a grant does not wait for a new connection to open.
    config.setMinimumIdle(
        settings.mode() == JdbcLockMode.LEASE_ROW ? 1 : settings.maxConcurrentCalls() + 1);
    config.setConnectionTimeout(connectMillis);
    config.setValidationTimeout(Math.max(250, Math.min(connectMillis, 5000)));
    // Fail at once when the database cannot be reached at start, instead of retrying in the pool.
    config.setInitializationFailTimeout(1);
    config.setAutoCommit(true);
    String url = String.valueOf(settings.url());
    int connectSeconds = (int) Math.max(1, (connectMillis + 999) / 1000);
    if (url.startsWith("jdbc:postgresql:")) {
      config.addDataSourceProperty("connectTimeout", Integer.toString(connectSeconds));
      config.addDataSourceProperty("loginTimeout", Integer.toString(connectSeconds));
      // The client notices a dead server or network; the server's side is set per grant.
      config.addDataSourceProperty("tcpKeepAlive", "true");
    } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      config.addDataSourceProperty("connectTimeout", Long.toString(connectMillis));
    }
    try {
      return new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new BackendUnavailableException(
          "Cannot connect to the lock database at "
              + settings.describeTarget()
              + ": "
              + Failures.describe(e),
          e);
    }
  }

  private static void probe(
      Connection c, LockStatements statements, @Nullable HeldLockStatements held)
      throws LockStatements.SchemaProblem, SQLException {
    statements.probe(c);
    if (held != null) {
      for (String probe : held.probes()) {
        statements.probeStep(c, probe, "use", "SELECT, INSERT, UPDATE, DELETE");
      }
    }
  }

  private static void createSchema(Connection c, LockStatements statements)
      throws SQLException, LockStatements.SchemaProblem {
    for (String resource : statements.schemaResources()) {
      String ddl = schemaDdl(resource, statements.table);
      try (Statement st = c.createStatement()) {
        st.setQueryTimeout(statements.queryTimeoutSeconds);
        // Comments first: they may contain semicolons.
        for (String sql : stripComments(ddl).split(";")) {
          String trimmed = sql.trim();
          if (trimmed.isBlank()) {
            continue;
          }
          try {
            st.execute(trimmed);
          } catch (SQLException e) {
            String state = String.valueOf(e.getSQLState());
            if (!state.equals("23505") && !state.equals("42P07") && !state.equals("42701")) {
              throw e;
            }
            // Another client created it at the same moment (PostgreSQL's IF NOT EXISTS is not
            // atomic): it exists now, which is all this step wants.
          }
        }
      } catch (SQLException e) {
        throw new LockStatements.SchemaProblem(
            "cannot create the lock table '"
                + statements.table
                + "' (createSchema is on): "
                + e.getMessage()
                + "; create it with the DDL in "
                + String.join(" then ", statements.schemaResources())
                + " as a user with DDL rights, and turn createSchema off",
            e);
      }
    }
  }

  /** The DDL of a dialect's schema resource for this table. */
  static String schemaDdl(String resource, String table) {
    try (InputStream in = JdbcLockBackend.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${table}", table);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + resource, e);
    }
  }

  private static String stripComments(String sql) {
    StringBuilder out = new StringBuilder();
    for (String line : sql.split("\n")) {
      int comment = line.indexOf("--");
      out.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
    }
    return out.toString().trim();
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

  /** The dialect in use: {@code PostgreSQL}, {@code MariaDB} or {@code H2}. */
  public String dialect() {
    return statements.dialect();
  }

  @Override
  public String name() {
    return "jdbc";
  }

  @Override
  public void start(BackendContext context) {
    HeldLocks held = heldLocks;
    if (held != null) {
      held.useClock(context.clock());
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
    String owner = lockOwner.key();
    boolean countsHolds = lockOwner.countsHolds();
    HeldLocks held = heldLocks;
    if (held != null) {
      return run(
          "acquire '" + lockName + "'",
          () -> held.tryAcquire(lockName, owner, countsHolds, lease.toMillis(), holder));
    }
    if (!countsHolds && pendingReleases.contains(releaseKey(lockName, owner))) {
      // The same per-grant owner asks again while its release has not been answered (the core
      // undid a grant whose request saw its session lost, and retries): re-entering the row now
      // would hand out the grant that the pending release then deletes. It is held until then.
      return CompletableFuture.completedFuture(new AcquireResult.Held(RELEASE_PENDING_RETRY));
    }
    return call(
        "acquire '" + lockName + "'",
        c -> statements.acquire(c, lockName, owner, countsHolds, holder, lease.toMillis()));
  }

  private static final Duration RELEASE_PENDING_RETRY = Duration.ofMillis(20);

  private static String releaseKey(String lockName, String owner) {
    return lockName + '\u0000' + owner;
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner lockOwner, long fencingToken) {
    String owner = lockOwner.key();
    HeldLocks held = heldLocks;
    if (held != null) {
      held.releaseRequested(lockName, owner, lockOwner.countsHolds(), fencingToken);
      // Not on the call executor: an unlock stuck on a silent socket (until the network timeout)
      // must not take a thread that another holder's renewal needs.
      return run(
          "release '" + lockName + "'",
          () -> held.release(lockName, owner, fencingToken),
          held.ioExecutor());
    }
    if (lockOwner.countsHolds()) {
      // An owner id's hold count lives in the row: a re-entry and a release are ordered there.
      return call(
          "release '" + lockName + "'", c -> statements.release(c, lockName, owner, fencingToken));
    }
    String key = releaseKey(lockName, owner);
    pendingReleases.add(key);
    CompletableFuture<ReleaseResult> released =
        call(
            "release '" + lockName + "'",
            c -> statements.release(c, lockName, owner, fencingToken));
    released.whenComplete((result, failure) -> pendingReleases.remove(key));
    return released;
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    if (leases.isEmpty()) {
      return CompletableFuture.completedFuture(Set.of());
    }
    HeldLocks held = heldLocks;
    if (held != null) {
      return run("renew " + leases.size() + " lease(s)", () -> held.renew(leases));
    }
    return call(
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
    return heldLocks != null ? Optional.of(this) : Optional.empty();
  }

  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(this);
  }

  /** False in the connection-bound modes: a lock belongs to the connection of one client. */
  @Override
  public boolean sharesOwnerIdsAcrossClients() {
    return heldLocks == null;
  }

  @Override
  public void bindEvents(BackendEvents events) {
    HeldLocks held = heldLocks;
    if (held != null) {
      held.bindEvents(events);
    }
  }

  /**
   * The locks held now, by the database: unexpired lease rows; in session mode the recorded grants
   * whose lock the database shows held by the recorded connection ({@code pg_locks}, {@code
   * IS_USED_LOCK}); in row mode the recorded grants whose connection is still open.
   */
  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    String like = LockStatements.likePattern(namePattern);
    HeldLockStatements held = heldStatements;
    return call(
        "list locks matching '" + namePattern + "'",
        c -> held != null ? held.inspect(c, like) : statements.inspect(c, namePattern));
  }

  /**
   * Breaks a lock. Lease rows: deletes the row. Session and row modes: ends the holder's connection
   * on the server ({@code pg_terminate_backend}, {@code KILL CONNECTION}, H2 {@code ABORT_SESSION};
   * the database user needs the right to) and waits until the database has freed the lock. The
   * holder learns it at its next renewal or heartbeat.
   */
  @Override
  public CompletableFuture<Optional<LockInfo>> forceRelease(String lockName) {
    HeldLockStatements held = heldStatements;
    return call(
        "force the release of '" + lockName + "'",
        c -> {
          if (held == null) {
            return statements.forceRelease(c, lockName);
          }
          Optional<HeldLockStatements.Holder> holder = held.holderOf(c, lockName);
          if (holder.isPresent()) {
            held.endSession(c, lockName, holder.get().sessionId());
            // Breaking the lock breaks its record too: the next grant need not wait for the
            // recorded lease end (the holder learns of it at its next heartbeat or renewal).
            held.clearRecord(c, lockName, holder.get().info().fencingToken());
          }
          return holder.map(HeldLockStatements.Holder::info);
        });
  }

  private void wakeAllWatchers() {
    for (ReleaseListener listener : releaseListeners.values()) {
      listener.released(null);
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
    return call("purge expired rows", c -> statements.purgeExpired(c, olderThan.toMillis()));
  }

  /** Deletes the row of {@code lockName}, whoever holds it: an operator's tool, and for tests. */
  CompletableFuture<Integer> deleteRow(String lockName) {
    return call("delete '" + lockName + "'", c -> statements.delete(c, lockName));
  }

  @FunctionalInterface
  private interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  @FunctionalInterface
  private interface SqlCall<T> {
    T run() throws SQLException;
  }

  private <T> CompletableFuture<T> call(String operation, SqlWork<T> work) {
    return run(
        operation,
        () -> {
          try (Connection c = dataSource.getConnection()) {
            if (!c.getAutoCommit()) {
              c.setAutoCommit(true); // each statement is atomic on its own
            }
            return work.run(c);
          }
        });
  }

  private <T> CompletableFuture<T> run(String operation, SqlCall<T> work) {
    return run(operation, work, executor);
  }

  private <T> CompletableFuture<T> run(
      String operation, SqlCall<T> work, java.util.concurrent.Executor on) {
    if (closed.get()) {
      return CompletableFuture.failedFuture(
          new BackendUnavailableException("The JDBC lock backend is closed: " + operation));
    }
    try {
      return CompletableFuture.supplyAsync(
          () -> {
            try {
              return work.run();
            } catch (SQLException e) {
              throw unavailable(operation, e);
            }
          },
          on);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(
          new BackendUnavailableException("The JDBC lock backend is closed: " + operation, e));
    }
  }

  private CompletionException unavailable(String operation, SQLException e) {
    String state = String.valueOf(e.getSQLState());
    if (!state.startsWith("08") && !state.startsWith("57") && !state.equals("null")) {
      // The database answered with an error: a bug or a misconfiguration rather than an outage.
      log.error("The {} database refused '{}': {}", statements.dialect(), operation, describe(e));
    }
    return new CompletionException(
        new BackendUnavailableException(
            statements.dialect()
                + " at "
                + settings.describeTarget()
                + " did not complete '"
                + operation
                + "': "
                + describe(e),
            e));
  }

  private static String describe(SQLException e) {
    return Failures.describe(e)
        + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]");
  }

  private static void closeQuietly(@Nullable HikariDataSource pool) {
    if (pool != null) {
      pool.close();
    }
  }

  /** Stops the executor, the release signals and the backend's own pool (not a given one). */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (signals != null) {
      signals.close();
    }
    if (heldLocks != null) {
      heldLocks.close();
    }
    executor.shutdown();
    try {
      if (!executor.awaitTermination(
          settings.statementTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
    closeQuietly(ownPool);
  }
}
