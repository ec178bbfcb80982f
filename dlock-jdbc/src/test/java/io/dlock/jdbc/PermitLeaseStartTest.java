package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.spi.AcquireResult;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The start of a permit's lease that {@link PermitAcquisition} reports ({@code
 * AcquireResult.Granted#leaseStartedAfterNanos}) must never be later than the database's clock
 * began the lease: the core trusts the grant until that start plus the lease. Found by review of
 * the lease-start change (2026-12-03):
 *
 * <ul>
 *   <li>H2's {@code CURRENT_TIMESTAMP} is the same throughout a transaction (fixed at its first
 *       use, the delete of ended grants), so a new grant's lease began two round trips before the
 *       insert whose send was reported;
 *   <li>a repeat whose grant ended while its extend was on its way (PostgreSQL's and MySQL's clocks
 *       move within a transaction) extended nothing, yet was answered granted, its lease counted
 *       from the extend: a grant the server no longer had.
 * </ul>
 *
 * The network's delay is stood for by waiting before a statement is sent, on the database's clock
 * (the databases run on this machine, on its clock, as the JVM).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PermitLeaseStartTest {
  private static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(5);
  private static final long DELAY_MILLIS = 300;
  private static final long LONG_LEASE_MILLIS = 60_000;

  /** Rounding of the clocks to milliseconds, and reading the JVM's two clocks one after another. */
  private static final long TOLERANCE_MILLIS = 5;

  @Test
  void h2ReportsNoLeaseStartAfterTheDatabaseClockStartedIt() throws Exception {
    reportsNoLeaseStartAfterTheDatabaseClockStartedIt(
        TestDatabases.H2_URL, H2PermitStatements::new);
  }

  @Test
  void postgresReportsNoLeaseStartAfterTheDatabaseClockStartedIt() throws Exception {
    reportsNoLeaseStartAfterTheDatabaseClockStartedIt(
        TestDatabases.postgres(), PostgresPermitStatements::new);
  }

  @Test
  void mariaDbReportsNoLeaseStartAfterTheDatabaseClockStartedIt() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    reportsNoLeaseStartAfterTheDatabaseClockStartedIt(
        TestDatabases.mariaDb().orElseThrow(), MySqlPermitStatements::new);
  }

  @Test
  void postgresRepeatWhoseGrantEndedBeforeItsExtendIsNotGranted() throws Exception {
    repeatWhoseGrantEndedBeforeItsExtendIsNotGranted(
        TestDatabases.postgres(), PostgresPermitStatements::new);
  }

  @Test
  void mariaDbRepeatWhoseGrantEndedBeforeItsExtendIsNotGranted() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    repeatWhoseGrantEndedBeforeItsExtendIsNotGranted(
        TestDatabases.mariaDb().orElseThrow(), MySqlPermitStatements::new);
  }

  private interface Statements {
    PermitStatements of(String table, Duration statementTimeout);
  }

  private static void reportsNoLeaseStartAfterTheDatabaseClockStartedIt(
      String url, Statements dialect) throws Exception {
    JdbcLockSettings settings = TestDatabases.settings(url).withStatementTimeout(STATEMENT_TIMEOUT);
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
      assertThat(backend.permits()).isPresent();
      PermitStatements statements = dialect.of(settings.table(), STATEMENT_TIMEOUT);
      PermitAcquisition acquisition = new PermitAcquisition(statements, System::nanoTime);
      String s = "lease-start-" + UUID.randomUUID();
      String owner = "t:" + UUID.randomUUID();
      try (Connection real = backend.dataSource().getConnection();
          Connection clock = backend.dataSource().getConnection()) {
        // An ended grant, which the acquisition deletes first: its transaction has written.
        String ended = "t:" + UUID.randomUUID();
        assertThat(acquisition.acquire(real, s, 2, 1, ended, "h", 1, System.nanoTime()))
            .isInstanceOf(AcquireResult.Granted.class);
        long endedAt = expiresAt(real, statements, s, ended);
        await().until(() -> now(clock, statements) > endedAt);
        // Between the transaction's first read of the clock and the insert: the summary's delay.
        Connection slow =
            delayedBefore(real, sql -> sql.equals(statements.summarySql()), clock, statements);
        long calledAt = System.nanoTime();
        long calledAtWall = System.currentTimeMillis();
        AcquireResult result =
            acquisition.acquire(slow, s, 2, 1, owner, "h", LONG_LEASE_MILLIS, calledAt);
        AcquireResult.Granted granted = (AcquireResult.Granted) result;
        long reportedStart = calledAtWall + granted.leaseStartedAfterNanos() / 1_000_000;
        long serverStart = expiresAt(real, statements, s, owner) - LONG_LEASE_MILLIS;
        assertThat(reportedStart)
            .as("the reported lease start, against the database's (ms since the epoch)")
            .isLessThanOrEqualTo(serverStart + TOLERANCE_MILLIS);
      }
    }
  }

  private static void repeatWhoseGrantEndedBeforeItsExtendIsNotGranted(
      String url, Statements dialect) throws Exception {
    JdbcLockSettings settings = TestDatabases.settings(url).withStatementTimeout(STATEMENT_TIMEOUT);
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
      assertThat(backend.permits()).isPresent();
      PermitStatements statements = dialect.of(settings.table(), STATEMENT_TIMEOUT);
      PermitAcquisition acquisition = new PermitAcquisition(statements, System::nanoTime);
      String s = "lease-start-repeat-" + UUID.randomUUID();
      String owner = "t:" + UUID.randomUUID();
      try (Connection real = backend.dataSource().getConnection();
          Connection clock = backend.dataSource().getConnection()) {
        AcquireResult first =
            acquisition.acquire(real, s, 1, 1, owner, "h", 2 * DELAY_MILLIS, System.nanoTime());
        assertThat(first).isInstanceOf(AcquireResult.Granted.class);
        long ends = expiresAt(real, statements, s, owner);
        // The repeat reads the grant live, and its extend arrives after the lease ended.
        Connection late =
            waitingBefore(
                real,
                sql -> sql.contains("GREATEST(expires_at"),
                () -> await().until(() -> now(clock, statements) > ends + 20));
        AcquireResult repeat =
            acquisition.acquire(late, s, 1, 1, owner, "h", LONG_LEASE_MILLIS, System.nanoTime());
        if (repeat instanceof AcquireResult.Granted granted) {
          assertThat(granted.fencingToken())
              .isEqualTo(((AcquireResult.Granted) first).fencingToken());
          assertThat(expiresAt(real, statements, s, owner))
              .as("the lease end of a grant answered to the repeat")
              .isGreaterThan(now(clock, statements));
        }
      }
    }
  }

  /**
   * {@code real}, whose statements matching {@code delayed} are sent {@link #DELAY_MILLIS} late.
   */
  private static Connection delayedBefore(
      Connection real, Predicate<String> delayed, Connection clock, PermitStatements statements) {
    return waitingBefore(
        real,
        delayed,
        () -> {
          long until = now(clock, statements) + DELAY_MILLIS;
          await().until(() -> now(clock, statements) >= until);
        });
  }

  private interface Wait {
    void run() throws Exception;
  }

  /** {@code real}, whose statements matching {@code delayed} are sent after {@code wait}. */
  private static Connection waitingBefore(Connection real, Predicate<String> delayed, Wait wait) {
    Function<PreparedStatement, PreparedStatement> waitingStatement =
        ps ->
            (PreparedStatement)
                Proxy.newProxyInstance(
                    PreparedStatement.class.getClassLoader(),
                    new Class<?>[] {PreparedStatement.class},
                    (proxy, method, args) -> {
                      if (method.getName().startsWith("execute")) {
                        wait.run();
                      }
                      return TestProxies.invoke(ps, method, args);
                    });
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object out = TestProxies.invoke(real, method, args);
              if (method.getName().equals("prepareStatement") && delayed.test((String) args[0])) {
                return waitingStatement.apply((PreparedStatement) out);
              }
              return out;
            });
  }

  /** The database's clock, in ms since the epoch, read in autocommit (a statement of its own). */
  private static long now(Connection clock, PermitStatements statements) throws SQLException {
    try (PreparedStatement ps = clock.prepareStatement("SELECT " + statements.nowMillis());
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long expiresAt(
      Connection c, PermitStatements statements, String semaphore, String owner)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT expires_at FROM "
                + statements.permits
                + " WHERE semaphore = ? AND owner = ?")) {
      ps.setString(1, semaphore);
      ps.setString(2, owner);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the grant's row").isTrue();
        return rs.getLong(1);
      }
    }
  }
}
