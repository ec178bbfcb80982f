package io.dlock.jdbc;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.Failures;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls of {@link JdbcLockBackend}: each runs off the caller's thread, on the backend's small
 * executor unless given another, so that no caller blocks. A call that fails on the database
 * completes with {@link BackendUnavailableException} naming the operation and the SQL state; once
 * the backend is closed, every call fails so.
 */
final class JdbcCalls {
  // The logger of JdbcLockBackend, whose calls these are: the log lines keep their category.
  private static final Logger log = LoggerFactory.getLogger(JdbcLockBackend.class);

  private final JdbcLockSettings settings;
  private final DataSource dataSource;
  private final LockStatements statements;
  private final ExecutorService executor;
  private final int networkTimeoutMillis;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * @param threadPrefix the executor's threads are named this, then {@code -call-} and a number
   */
  JdbcCalls(
      JdbcLockSettings settings,
      DataSource dataSource,
      LockStatements statements,
      String threadPrefix) {
    this.settings = settings;
    this.dataSource = dataSource;
    this.statements = statements;
    this.executor = DriverThreads.blockingCalls(threadPrefix, settings.maxConcurrentCalls());
    this.networkTimeoutMillis = SocketTimeouts.millis(settings);
  }

  @FunctionalInterface
  interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  @FunctionalInterface
  interface SqlCall<T> {
    T run() throws SQLException;
  }

  /**
   * Runs {@code work} on a pooled connection, on the backend's executor. Every read on the
   * connection is bounded ({@link SocketTimeouts}): on a silent network the thread gives up past
   * the statement timeout, with the connection, instead of waiting in the read for TCP keepalive
   * while the backend's few threads run out and every later call queues behind it.
   */
  <T> CompletableFuture<T> call(String operation, SqlWork<T> work) {
    return run(
        operation,
        () -> {
          Borrowed borrowed = borrowOpen();
          try (Connection c = borrowed.connection()) {
            try {
              return work.run(c);
            } finally {
              SocketTimeouts.restore(c, borrowed.poolNetworkTimeout());
            }
          }
        });
  }

  /**
   * A pooled connection in autocommit (each statement atomic on its own). One found broken before
   * anything of the call was sent on it is given back and another borrowed, once: a pool may hand
   * out a connection the driver closed under an earlier call (HikariCP did, with the connection a
   * lost commit answer broke, to the very undo of that grant: {@code LostCommitAnswerTest}), and
   * the failure has the pool discard it. Retrying the call itself instead could run an undo twice
   * after an answer lost, and an owner id's "one hold less" is not idempotent.
   */
  private Borrowed borrowOpen() throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      return open(c);
    } catch (SQLException e) {
      closeQuietly(c, e);
      if (!MySqlLeaseRowAcquisition.connectionFailed(e)) {
        throw e;
      }
    } catch (RuntimeException e) {
      closeQuietly(c, e);
      throw e;
    }
    Connection again = dataSource.getConnection();
    try {
      return open(again);
    } catch (SQLException | RuntimeException e) {
      closeQuietly(again, e);
      throw e;
    }
  }

  /** A borrowed connection, and the network timeout the pool had set on it, to restore. */
  private record Borrowed(Connection connection, int poolNetworkTimeout) {}

  /**
   * Bounds {@code c}'s socket by the network timeout, then puts it in autocommit: the bound comes
   * first, since the return to autocommit is a round trip on the MySQL family, and on a silent
   * network a read under the pool's timeout (none) waited for TCP to give up (found by review:
   * {@code BorrowedConnectionSilentNetworkTest}).
   */
  private Borrowed open(Connection c) throws SQLException {
    int poolNetworkTimeout = SocketTimeouts.bound(c, networkTimeoutMillis);
    try {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException | RuntimeException e) {
      SocketTimeouts.restore(c, poolNetworkTimeout);
      throw e;
    }
    return new Borrowed(c, poolNetworkTimeout);
  }

  private static void closeQuietly(Connection c, Exception failure) {
    try {
      c.close();
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  /** Runs {@code work} on the backend's executor. */
  <T> CompletableFuture<T> run(String operation, SqlCall<T> work) {
    return run(operation, work, executor);
  }

  <T> CompletableFuture<T> run(String operation, SqlCall<T> work, Executor on) {
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

  static String describe(SQLException e) {
    return Failures.describe(e)
        + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]");
  }

  /**
   * Refuses every call from now on.
   *
   * @return false if that was done before
   */
  boolean refuseCalls() {
    return closed.compareAndSet(false, true);
  }

  /** Stops the executor, letting the calls running finish within the statement timeout. */
  void stop() {
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
  }
}
