package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The MySQL family's lease-row acquisition (both dialects) in round trips (statements, commits and
 * changes of autocommit sent), counted on the connection: a refusal is one statement, a new grant
 * three, a re-entry two. Its first form (a transaction and a read back) took four to a refusal and
 * six to a grant, and under the fault suite's {@code delay} (200 ms each way, a 2 s lease) every
 * grant arrived after its lease: no lock was granted while the delay lasted. The refusal's count
 * also shows the upsert names a lock held by another (its remaining lease) rather than a grant of
 * its own, which would draw a token.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MySqlLeaseRowRoundTripsTest {
  private static final long LEASE_MILLIS = 30_000;

  private final RoundTrips sent = new RoundTrips();
  private JdbcLockSettings settings;
  private MySqlLeaseRowStatements statements;

  private JdbcLockBackend backend;
  private Connection connection;

  /**
   * The tables, and one connection that has served an acquisition already (the first reads the
   * session's id, once per connection, for the fence of a lost upsert).
   */
  private void tables(String database) throws Exception {
    settings = LeaseRowRenewalTest.settings(database, "");
    backend = JdbcLockBackend.connect(settings); // creates the tables
    connection = backend.dataSource().getConnection();
    statements =
        database.equals("mariadb")
            ? new MariaDbLeaseRowStatements(settings.table(), Duration.ofSeconds(5))
            : new MySqlLeaseRowStatements(settings.table(), Duration.ofSeconds(5));
    statements.acquire(connection, "warm-" + UUID.randomUUID(), "t:warm", false, "test", 1_000);
  }

  @AfterEach
  void close() throws Exception {
    if (connection != null) {
      connection.close();
      backend.close();
    }
  }

  private AcquireResult acquire(String name, String owner, boolean countsHolds) throws Exception {
    sent.reset();
    return statements.acquire(
        sent.counting(connection), name, owner, countsHolds, "test", LEASE_MILLIS);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"mysql-on-mariadb", "mariadb"})
  void aNewGrantIsThreeStatementsAndARefusalOne(String database) throws Exception {
    tables(database);
    String name = "round-trips-" + UUID.randomUUID();
    assertThat(acquire(name, "t:first", false)).isInstanceOf(AcquireResult.Granted.class);
    assertThat(sent.sent()).as("the upsert, the draw, the token's write").isEqualTo(3);

    AcquireResult refused = acquire(name, "t:second", false);
    assertThat(sent.sent()).as("the upsert alone").isEqualTo(1);
    assertThat(refused)
        .isInstanceOfSatisfying(
            AcquireResult.Held.class,
            held ->
                assertThat(held.holderRemaining())
                    .isBetween(
                        Duration.ofMillis(LEASE_MILLIS - 10_000), Duration.ofMillis(LEASE_MILLIS)));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"mysql-on-mariadb", "mariadb"})
  void aReentryIsTwoStatementsAndKeepsTheGrantsToken(String database) throws Exception {
    tables(database);
    String name = "round-trips-" + UUID.randomUUID();
    AcquireResult first = acquire(name, "o:shared", true);
    assertThat(first).isInstanceOf(AcquireResult.Granted.class);
    long token = ((AcquireResult.Granted) first).fencingToken();

    assertThat(acquire(name, "o:shared", true)).isEqualTo(new AcquireResult.Granted(token, 2));
    assertThat(sent.sent()).as("the upsert, a read of the grant's token").isEqualTo(2);
  }
}
