package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * MariaDB's own dialect keeps names that differ only in trailing spaces apart, in every mode: its
 * tables compare names, owners and session keys with a NO PAD collation. (utf8mb4_bin, which the
 * DDL used before, pads: "a" and "a " were one lease row, one row lock, one session-lock record.) A
 * table made with a padding collation is refused at start, naming the column.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MariaDbPaddingTest {
  /** A table of its own, made by the DDL, so that the test sees exactly the collation it ships. */
  private static final String TABLE = "dlock_pad_" + Long.toHexString(System.nanoTime());

  @ParameterizedTest(name = "{0}")
  @EnumSource(JdbcLockMode.class)
  void namesDifferingOnlyInTrailingSpacesAreLocksOfTheirOwn(JdbcLockMode mode) {
    JdbcLockSettings settings = TestDatabases.settings(mariaDb(), mode).withTable(TABLE);
    String name = "pad-" + UUID.randomUUID();
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      Lease plain = client.lock(name).tryAcquire().orElseThrow();
      Lease padded =
          other
              .lock(name + " ")
              .tryAcquire()
              .orElseThrow(() -> new AssertionError("'" + name + " ' was taken as '" + name + "'"));
      assertThat(padded.fencingToken()).isNotEqualTo(plain.fencingToken());
      assertThat(other.lock(name).tryAcquire()).as("the plain name is held").isEmpty();
      assertThat(padded.release()).isTrue();
      assertThat(plain.release()).isTrue();
    }
  }

  @Test
  void aLockTableWithAPaddingCollationIsRefusedAtStartNamingTheColumn() throws SQLException {
    String table = "dlock_padold_" + Long.toHexString(System.nanoTime());
    try (Connection admin = DriverManager.getConnection(mariaDb());
        Statement st = admin.createStatement()) {
      st.execute("CREATE SEQUENCE " + table + "_fence");
      st.execute(
          "CREATE TABLE "
              + table
              + " (name VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,"
              + " owner VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,"
              + " holds INT NOT NULL, token BIGINT NOT NULL, expires_at BIGINT NOT NULL,"
              + " holder VARCHAR(200) CHARACTER SET utf8mb4, granted_at BIGINT, grant_nonce BIGINT)"
              + " ENGINE = InnoDB");
      try {
        assertThatThrownBy(
                () ->
                    JdbcLockBackend.connect(
                            TestDatabases.settings(mariaDb(), JdbcLockMode.LEASE_ROW)
                                .withTable(table))
                        .close())
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("the column " + table + ".name has the collation utf8mb4_bin")
            .hasMessageContaining("utf8mb4_nopad_bin");
      } finally {
        st.execute("DROP TABLE IF EXISTS " + table);
        st.execute("DROP SEQUENCE IF EXISTS " + table + "_fence");
      }
    }
  }

  @AfterAll
  static void dropTables() throws SQLException {
    if (!TestDatabases.hasMariaDb()) {
      return;
    }
    try (Connection admin = DriverManager.getConnection(mariaDb());
        Statement st = admin.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + TABLE + ", " + TABLE + "_held, " + TABLE + "_rows");
      st.execute("DROP SEQUENCE IF EXISTS " + TABLE + "_fence");
    }
  }

  private static String mariaDb() {
    return TestDatabases.mariaDb().orElseThrow();
  }
}
