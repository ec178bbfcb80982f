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
import java.util.List;
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
    // MariaDB's own dialect keeps the keys it always had (clients of two versions must agree).
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
      try (Connection c = DriverManager.getConnection(mariaDb());
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table + ", " + table + "_fences");
        st.execute("DROP TABLE IF EXISTS " + table + "_held, " + table + "_rows");
      }
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
      try (Connection c = DriverManager.getConnection(mariaDb());
          Statement st = c.createStatement()) {
        st.execute("DROP SEQUENCE IF EXISTS " + mariaDbTable + "_fence");
        for (String table : List.of(mariaDbTable, mySqlTable)) {
          st.execute("DROP TABLE IF EXISTS " + table + ", " + table + "_fences");
          st.execute("DROP TABLE IF EXISTS " + table + "_held, " + table + "_rows");
        }
      }
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
}
