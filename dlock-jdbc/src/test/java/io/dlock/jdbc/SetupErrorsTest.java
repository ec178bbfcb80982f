package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A bad setup or bad settings give an error that says which, and how to fix it. */
class SetupErrorsTest {

  @Test
  void aMissingTableIsReportedWithTheDdlAndTheSwitchThatCreatesIt() {
    assertThatThrownBy(
            () ->
                JdbcLockBackend.connect(
                    JdbcLockSettings.of(TestDatabases.H2_URL).withTable("no_such_locks")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'no_such_locks'")
        .hasMessageContaining("is missing")
        .hasMessageContaining("io/dlock/jdbc/schema/h2-v1.sql")
        .hasMessageContaining("withCreateSchema(true)");
  }

  @Test
  void missingPrivilegesOnPostgresAreReportedWithTheGrantToAdd() throws SQLException {
    String admin = TestDatabases.postgres();
    JdbcLockBackend.connect(TestDatabases.settings(admin)).close(); // the table exists
    try (Connection c = DriverManager.getConnection(admin);
        Statement st = c.createStatement()) {
      st.execute(
          "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlock_reader')"
              + " THEN CREATE ROLE dlock_reader LOGIN; END IF; END $$");
      st.execute("GRANT SELECT ON " + TestDatabases.TABLE + " TO dlock_reader");
    }
    String reader = admin.replaceAll("user=[^&]*", "user=dlock_reader");
    assertThatThrownBy(
            () ->
                JdbcLockBackend.connect(JdbcLockSettings.of(reader).withTable(TestDatabases.TABLE)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("may not update")
        .hasMessageContaining("grant it SELECT, INSERT, UPDATE, DELETE");
  }

  @Test
  void anUnreachableDatabaseFailsFastWithBackendUnavailable() {
    long start = System.nanoTime();
    assertThatThrownBy(
            () ->
                JdbcLocks.newClient(
                    JdbcLockSettings.of(TestDatabases.unreachable("jdbc:postgresql:"))
                        .withConnectTimeout(Duration.ofSeconds(1)),
                    LockClientOptions.defaults()))
        .isInstanceOf(io.dlock.BackendUnavailableException.class)
        .hasMessageContaining("127.0.0.1");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isLessThan(io.dlock.testkit.TestTiming.millis(3000));
  }

  @Test
  void badSettingsNameTheParameterAndTheAllowedRange() {
    JdbcLockSettings base = JdbcLockSettings.of(TestDatabases.H2_URL);
    assertThatThrownBy(() -> base.withTable("locks; DROP TABLE x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("table must have 1 to 48 characters");
    assertThatThrownBy(() -> base.withTable("x".repeat(49)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("table");
    assertThatThrownBy(() -> base.withStatementTimeout(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("statementTimeout must be from PT1S to PT5M");
    assertThatThrownBy(() -> base.withConnectTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("connectTimeout");
    assertThatThrownBy(() -> base.withMaxConcurrentCalls(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxConcurrentCalls must be from 1 to 64");
    assertThatThrownBy(() -> JdbcLockSettings.of("postgresql://x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("url must be a JDBC URL");
  }

  @Test
  void purgeDeletesOnlyRowsLongExpiredByTheDatabaseClock() throws Exception {
    try (JdbcLockBackend backend =
            JdbcLockBackend.connect(TestDatabases.settings(TestDatabases.H2_URL));
        LockClient client =
            io.dlock.core.CoreLockClient.create(backend, LockClientOptions.defaults())) {
      String live = "purge-live-" + System.nanoTime();
      var held = client.lock(live).tryAcquire().orElseThrow();
      backend.purgeExpired(Duration.ZERO).get();
      assertThat(held.isValid()).isTrue();
      assertThat(held.release()).as("a live row is never purged").isTrue();
    }
  }
}
