package io.dlock.jdbc;

import static io.dlock.spi.ReleaseResult.RELEASED;
import static io.dlock.spi.ReleaseResult.STILL_HELD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Lease-row renewal on every dialect, driven through the statements on one connection (no timers,
 * no waits): a renewal never shortens the lease on the server, and a renewal that leaves the row as
 * it was is still a renewal, also where the driver counts changed rows only.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseRowRenewalTest {
  private static final LockOwner OWNER = LockOwner.ofOwnerId("shared");
  private static final long LONG = 30_000;
  private static final long SHORT = 2_000;

  /**
   * Two clients of one owner id with leases of 30 s and 2 s: the short one's renewal must leave the
   * row's lease end where the long one put it, also when it reaches the server after the short
   * hold's release (sent before it, on another pooled connection), which leaves a hold count of
   * one: the long client's. That renewal set the lease to 2 s, and the long holder, trusting 30 s,
   * lost the lock on the server.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void anOwnerIdsShorterRenewalNeverShortensTheLeaseOnTheServer(String database) throws Exception {
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings(database, ""));
        Connection c = backend.dataSource().getConnection()) {
      LockStatements statements = backend.statements();
      String name = "renew-max-" + UUID.randomUUID();
      long token = grant(statements, c, name, OWNER, LONG);
      assertThat(grant(statements, c, name, OWNER, SHORT)).isEqualTo(token);
      HeldLease shortHold = new HeldLease(name, OWNER, token, Duration.ofMillis(SHORT));

      assertThat(statements.renew(c, List.of(shortHold))).as("renewed, not gone").isEmpty();
      assertThat(remaining(statements, c, name)).isGreaterThan(LONG - 10_000);
      // The short hold's release, then its renewal sent before it.
      assertThat(statements.release(c, name, OWNER.key(), token)).isEqualTo(STILL_HELD);
      assertThat(statements.renew(c, List.of(shortHold))).as("renewed, not gone").isEmpty();

      assertThat(remaining(statements, c, name))
          .as("the lease end after the short renewals (ms from now)")
          .isGreaterThan(LONG - 10_000);
      assertThat(statements.release(c, name, OWNER.key(), token)).isEqualTo(RELEASED);
    }
  }

  /** A grant owner has one holder: its extension sets the lease as asked, shorter too. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void aGrantOwnersExtensionMayShortenItsLease(String database) throws Exception {
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings(database, ""));
        Connection c = backend.dataSource().getConnection()) {
      LockStatements statements = backend.statements();
      String name = "renew-shorter-" + UUID.randomUUID();
      LockOwner owner = LockOwner.ofGrant(UUID.randomUUID().toString());
      long token = grant(statements, c, name, owner, LONG);
      HeldLease shorter = new HeldLease(name, owner, token, Duration.ofMillis(SHORT));
      assertThat(statements.renew(c, List.of(shorter))).isEmpty();
      assertThat(remaining(statements, c, name)).isLessThanOrEqualTo(SHORT);
      assertThat(statements.release(c, name, owner.key(), token)).isEqualTo(RELEASED);
    }
  }

  /**
   * MariaDB and MySQL with {@code useAffectedRows=true} count rows an UPDATE changed, not rows it
   * matched: a renewal that leaves the lease end as it was (a longer lease of the same grant) was
   * counted as a lost lease.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"mariadb", "mysql-on-mariadb"})
  void aRenewalLeavingTheRowUnchangedIsNotALossWithUseAffectedRows(String database)
      throws Exception {
    try (JdbcLockBackend backend =
            JdbcLockBackend.connect(settings(database, "useAffectedRows=true"));
        Connection c = backend.dataSource().getConnection()) {
      LockStatements statements = backend.statements();
      String name = "renew-unchanged-" + UUID.randomUUID();
      long token = grant(statements, c, name, OWNER, LONG);
      assertThat(grant(statements, c, name, OWNER, SHORT)).isEqualTo(token);

      HeldLease shortHold = new HeldLease(name, OWNER, token, Duration.ofMillis(SHORT));
      HeldLease stranger = new HeldLease(name, OWNER, token + 1, Duration.ofMillis(SHORT));
      assertThat(statements.renew(c, List.of(shortHold, stranger)))
          .as("only the lease of another grant is gone")
          .containsExactly(1);
      assertThat(statements.release(c, name, OWNER.key(), token)).isEqualTo(STILL_HELD);
      assertThat(statements.release(c, name, OWNER.key(), token)).isEqualTo(RELEASED);
    }
  }

  private static long grant(
      LockStatements statements, Connection c, String name, LockOwner owner, long leaseMillis)
      throws SQLException {
    AcquireResult result =
        statements.acquire(c, name, owner.key(), owner.countsHolds(), "test", leaseMillis);
    assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    return ((AcquireResult.Granted) result).fencingToken();
  }

  /** The lease's remaining time on the server, by the database's clock. */
  private static long remaining(LockStatements statements, Connection c, String name)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT expires_at - "
                + statements.nowMillis()
                + " FROM "
                + statements.table
                + " WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getLong(1);
      }
    }
  }

  static JdbcLockSettings settings(String database, String urlOptions) {
    return switch (database) {
      case "h2" -> TestDatabases.settings(TestDatabases.H2_URL);
      case "postgresql" -> TestDatabases.settings(TestDatabases.postgres());
      case "mariadb" -> TestDatabases.settings(withOptions(mariaDb(), urlOptions));
      case "mysql-on-mariadb" ->
          TestDatabases.mySqlSettings(withOptions(mariaDb(), urlOptions), JdbcLockMode.LEASE_ROW);
      default -> throw new IllegalArgumentException(database);
    };
  }

  private static String mariaDb() {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    return TestDatabases.mariaDb().orElseThrow();
  }

  private static String withOptions(String url, String options) {
    if (options.isEmpty()) {
      return url;
    }
    return url + (url.contains("?") ? "&" : "?") + options;
  }
}
