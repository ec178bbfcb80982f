package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the MySQL dialect does that MariaDB's does not, on MariaDB with the dialect forced: session
 * keys that no case-folding server can confuse, names and owners that differ only in trailing
 * spaces kept apart, one dialect per table, and the server's own dialect or MySQL on MariaDB only.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MySqlDialectTest {

  @Test
  void sessionKeysAreHashedToLowercaseHexSoNamesDifferingInCaseNeverShareOne() {
    MySqlSessionLockStatements mySql =
        new MySqlSessionLockStatements("dlock_locks", Duration.ofSeconds(5));
    String upper = mySql.key("Order-42");
    String lower = mySql.key("order-42");
    assertThat(upper).isNotEqualTo(lower).hasSizeLessThanOrEqualTo(64);
    assertThat(upper).isEqualTo(upper.toLowerCase(Locale.ROOT));
    assertThat(lower).isEqualTo(lower.toLowerCase(Locale.ROOT));
    // MariaDB's own dialect uses the plain key where it fits.
    assertThat(
            new MariaDbSessionLockStatements("dlock_locks", Duration.ofSeconds(5)).key("Order-42"))
        .isEqualTo("dlock_locks:Order-42");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(JdbcLockMode.class)
  void namesDifferingOnlyInTrailingSpacesAreLocksOfTheirOwn(JdbcLockMode mode) {
    JdbcLockSettings settings = TestDatabases.mySqlSettings(mariaDb(), mode);
    String name = "pad-" + UUID.randomUUID();
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      Lease plain = client.lock(name).tryAcquire().orElseThrow();
      Lease padded = other.lock(name + " ").tryAcquire().orElseThrow();
      assertThat(other.lock(name).tryAcquire()).as("the plain name is held").isEmpty();
      assertThat(padded.release()).isTrue();
      assertThat(plain.release()).isTrue();
    }
  }

  /**
   * A lease-row grant commits before its token is drawn and written: when that write fails, the
   * grant is undone before the failure is reported, instead of blocking the name until its lease
   * ends with no holder. (A test trigger makes the token write of owner id {@code failing} fail.)
   */
  @Test
  void aGrantWhoseTokenWriteFailsIsUndoneNotLeftBlockingTheName() throws Exception {
    String table = "dlock_undo_" + Long.toHexString(System.nanoTime());
    JdbcLockSettings settings =
        TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW).withTable(table);
    try (LockClient failing = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection admin = DriverManager.getConnection(mariaDb());
        Statement st = admin.createStatement()) {
      st.execute(
          """
          CREATE TRIGGER %1$s_fail BEFORE UPDATE ON %1$s FOR EACH ROW
          BEGIN
            IF NEW.owner = 'o:failing' AND OLD.token = 0 AND NEW.token <> 0 THEN
              SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the token write fails (test)';
            END IF;
          END
          """
              .formatted(table));
      String name = "undo-" + UUID.randomUUID();
      assertThatThrownBy(
              () ->
                  failing
                      .lock(name, io.dlock.LockOptions.defaults().withOwnerId("failing"))
                      .tryAcquire())
          .isInstanceOf(io.dlock.BackendUnavailableException.class)
          .hasMessageContaining("the token write fails");
      Lease next = other.lock(name).tryAcquire().orElseThrow();
      assertThat(next.fencingToken()).isPositive();
      assertThat(next.release()).isTrue();
    } finally {
      dropTables(table);
    }
  }

  /**
   * Regression (issue 29, finding 8): a grant whose connection dies after its commit with token 0
   * (and before its token is written) was undone on that same dead connection, which failed too,
   * and the grant blocked the name for its whole lease. Now the undo runs on another connection.
   * Test triggers stand in for the dead connection: the token write of owner id {@code dying} fails
   * with a connection error (SQLState 08S01, so the pool drops the connection), and every later
   * delete on that session would fail too; another session's delete goes through.
   */
  @Test
  void aGrantWhoseConnectionDiesBeforeItsTokenIsWrittenIsUndoneOnAnotherConnection()
      throws Exception {
    String table = "dlock_dead_" + Long.toHexString(System.nanoTime());
    JdbcLockSettings settings =
        TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW).withTable(table);
    try (LockClient dying = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection admin = DriverManager.getConnection(mariaDb());
        Statement st = admin.createStatement()) {
      st.execute(
          """
          CREATE TRIGGER %1$s_die BEFORE UPDATE ON %1$s FOR EACH ROW
          BEGIN
            IF NEW.owner = 'o:dying' AND OLD.token = 0 AND NEW.token <> 0 THEN
              SET @dlock_test_dead = 1;
              SIGNAL SQLSTATE '08S01' SET MESSAGE_TEXT = 'the connection dies (test)';
            END IF;
          END
          """
              .formatted(table));
      st.execute(
          """
          CREATE TRIGGER %1$s_dead BEFORE DELETE ON %1$s FOR EACH ROW
          BEGIN
            IF @dlock_test_dead = 1 THEN
              SIGNAL SQLSTATE '08S01' SET MESSAGE_TEXT = 'the connection is dead (test)';
            END IF;
          END
          """
              .formatted(table));
      String name = "dead-" + UUID.randomUUID();
      assertThatThrownBy(
              () ->
                  dying
                      .lock(name, io.dlock.LockOptions.defaults().withOwnerId("dying"))
                      .tryAcquire())
          .isInstanceOf(io.dlock.BackendUnavailableException.class)
          .hasMessageContaining("the connection dies");
      Lease next = other.lock(name).tryAcquire().orElseThrow();
      assertThat(next.fencingToken()).isPositive();
      assertThat(next.release()).isTrue();
    } finally {
      dropTables(table);
    }
  }

  /**
   * Regression (issue 29, finding 12): while a grant's token was not written yet (token 0), {@code
   * forceRelease} answered "nobody held it", while {@code inspect} listed the lock and {@code
   * tryAcquire} was refused, so an operator could not break it. The grant's nonce now names it: the
   * forced release deletes it, and the acquisition that committed it hears the lock is held. (A row
   * written by hand stands for a grant between its commit and its token's write.)
   */
  @Test
  void aGrantWhoseTokenIsNotWrittenYetCanBeForceReleased() throws Exception {
    String table = "dlock_zero_" + Long.toHexString(System.nanoTime());
    JdbcLockSettings settings =
        TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW).withTable(table);
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient admin = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      String name = "zero-" + UUID.randomUUID();
      // A token-0 row as a grant leaves it between its commit and its token's write.
      try (Connection c = DriverManager.getConnection(mariaDb());
          Statement st = c.createStatement()) {
        st.execute(
            ("INSERT INTO %s (name, owner, holds, token, expires_at, holder, granted_at,"
                    + " grant_nonce) VALUES ('%s', 'o:stuck', 1, 0, %s + 60000, 'test', %s, 42)")
                .formatted(table, name, MySqlDialect.NOW_MILLIS, MySqlDialect.NOW_MILLIS));
      }
      assertThat(admin.inspect(name)).hasSize(1);
      assertThat(client.lock(name).tryAcquire()).as("held by the token-0 grant").isEmpty();

      assertThat(admin.forceRelease(name)).as("the forced release finds it").isPresent();
      Lease next = client.lock(name).tryAcquire().orElseThrow();
      assertThat(next.fencingToken()).isPositive();
      assertThat(next.release()).isTrue();
    } finally {
      dropTables(table);
    }
  }

  @Test
  void aTableWithTheOtherDialectsCounterIsRefusedAndLeftAsItIs() throws Exception {
    String mariaDbTable = "dlock_two_dialects_" + Long.toHexString(System.nanoTime());
    String mySqlTable = mariaDbTable + "_my";
    try {
      try (JdbcLockBackend mariaDb =
              JdbcLockBackend.connect(TestDatabases.settings(mariaDb()).withTable(mariaDbTable));
          JdbcLockBackend mySql =
              JdbcLockBackend.connect(
                  TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW)
                      .withTable(mySqlTable))) {
        assertThat(mariaDb.dialect()).isEqualTo("MariaDB");
        assertThat(mySql.dialect()).isEqualTo("MySQL");
      }
      assertThatThrownBy(
              () ->
                  JdbcLockBackend.connect(
                      TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW)
                          .withTable(mariaDbTable)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(
              mariaDbTable + "_fence, the fencing counter of the other MySQL-family");
      assertThatThrownBy(
              () ->
                  JdbcLockBackend.connect(TestDatabases.settings(mariaDb()).withTable(mySqlTable)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(
              mySqlTable + "_fences, the fencing counter of the other MySQL-family");
      // Refused without creating its own counter there: the first dialect's clients still start.
      JdbcLockBackend.connect(TestDatabases.settings(mariaDb()).withTable(mariaDbTable)).close();
      JdbcLockBackend.connect(
              TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW).withTable(mySqlTable))
          .close();
    } finally {
      dropTables(mariaDbTable);
      dropTables(mySqlTable);
    }
  }

  @Test
  void aDatabaseOtherThanTheServersIsRefusedNamingBoth() {
    assertThatThrownBy(
            () ->
                JdbcLockBackend.connect(
                    TestDatabases.settings(mariaDb()).withDatabase(JdbcDatabase.POSTGRESQL)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("database is POSTGRESQL")
        .hasMessageContaining("MARIADB")
        .hasMessageContaining("MYSQL on MariaDB");
    try (JdbcLockBackend forced =
        JdbcLockBackend.connect(TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW))) {
      assertThat(forced.dialect()).isEqualTo("MySQL");
    }
  }

  private static String mariaDb() {
    return TestDatabases.mariaDb().orElseThrow();
  }

  /** Drops a lock table of a test and what either dialect made beside it. */
  private static void dropTables(String table) throws java.sql.SQLException {
    try (Connection c = DriverManager.getConnection(mariaDb());
        Statement st = c.createStatement()) {
      st.execute("DROP SEQUENCE IF EXISTS " + table + "_fence");
      st.execute("DROP TABLE IF EXISTS " + table + ", " + table + "_fences");
      st.execute("DROP TABLE IF EXISTS " + table + "_held, " + table + "_rows");
    }
  }
}
