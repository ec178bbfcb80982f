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
        .isInstanceOfSatisfying(
            JdbcSchemaException.class,
            e -> assertThat(e.fixedByCreatingTheSchema()).as("createSchema fixes it").isTrue())
        .hasMessageContaining("'no_such_locks'")
        .hasMessageContaining("is missing")
        .hasMessageContaining("io/dlock/jdbc/schema/h2.sql")
        .hasMessageContaining("withCreateSchema(true)")
        .hasMessageContaining("createSchema=true")
        .hasMessageContaining("dlock.jdbc.create-schema=true");
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
      // The schema too: a public schema made anew lacks PostgreSQL's default USAGE for everyone.
      st.execute("GRANT USAGE ON SCHEMA public TO dlock_reader");
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
  void sessionModeOnH2IsRefusedNamingTheModesThatWork() {
    assertThatThrownBy(
            () ->
                JdbcLockBackend.connect(
                    TestDatabases.settings(TestDatabases.H2_URL, JdbcLockMode.SESSION)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mode SESSION")
        .hasMessageContaining("use mode LEASE_ROW or ROW on H2");
  }

  @Test
  void twoNamesWithOneSessionLockKeyAreRefusedNotMerged() throws SQLException {
    String url = TestDatabases.postgres();
    JdbcLockSettings settings = TestDatabases.settings(url, JdbcLockMode.SESSION);
    String name = "collision-" + java.util.UUID.randomUUID();
    String key = Long.toString(PostgresSessionLockStatements.key(name));
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection c = DriverManager.getConnection(url)) {
      // A record of another name with the same key, as a real 64-bit hash collision would leave.
      try (var ps =
          c.prepareStatement(
              "INSERT INTO "
                  + TestDatabases.TABLE
                  + "_held (name, lock_key, token) VALUES (?, ?, 0)")) {
        ps.setString(1, name + "-twin");
        ps.setString(2, key);
        ps.executeUpdate();
      }
      try {
        assertThatThrownBy(() -> client.lock(name).tryAcquire())
            .hasMessageContaining("same session lock key")
            .hasMessageContaining(name + "-twin");
        try (var ps = c.prepareStatement("SELECT pg_try_advisory_lock(?), pg_advisory_unlock(?)")) {
          ps.setLong(1, Long.parseLong(key));
          ps.setLong(2, Long.parseLong(key));
          try (var rs = ps.executeQuery()) {
            assertThat(rs.next() && rs.getBoolean(1))
                .as("the refused grant left nothing held")
                .isTrue();
          }
        }
      } finally {
        try (var ps =
            c.prepareStatement("DELETE FROM " + TestDatabases.TABLE + "_held WHERE name = ?")) {
          ps.setString(1, name + "-twin");
          ps.executeUpdate();
        }
      }
    }
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
    assertThatThrownBy(() -> base.withMaxHeldLocks(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxHeldLocks must be from 1 to 1000");
    assertThatThrownBy(() -> base.withHeartbeatInterval(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("heartbeatInterval must be from PT0.05S to PT1M");
    assertThatThrownBy(() -> JdbcLockSettings.of("postgresql://x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("url must be a JDBC URL");
  }

  @Test
  void purgeDeletesOnlyRowsLongExpiredByTheDatabaseClock() throws Exception {
    try (JdbcLockBackend backend =
            JdbcLockBackend.connect(TestDatabases.settings(TestDatabases.H2_URL));
        LockClient client = io.dlock.LockClients.create(backend, LockClientOptions.defaults())) {
      String live = "purge-live-" + System.nanoTime();
      var held = client.lock(live).tryAcquire().orElseThrow();
      backend.purgeExpired(Duration.ZERO).get();
      assertThat(held.isValid()).isTrue();
      assertThat(held.release()).as("a live row is never purged").isTrue();
    }
  }
}
