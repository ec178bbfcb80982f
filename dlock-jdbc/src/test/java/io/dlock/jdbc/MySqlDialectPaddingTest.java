package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Review of 65ecb97: the start-up collation check is MariaDB's dialect's only. The MySQL dialect
 * (MySQL 8, or forced on MariaDB) starts on a lease table whose name column is a PAD SPACE
 * collation ({@code utf8mb4_bin}, what a MySQL 8 user writes by hand): "a" and "a " are then one
 * lock, the very defect the MariaDB dialect refuses to start with.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MySqlDialectPaddingTest {

  @Test
  void theMySqlDialectRefusesALockTableWithAPaddingCollation() throws Exception {
    String url = TestDatabases.mariaDb().orElseThrow();
    String table = "dlock_mypad_" + Long.toHexString(System.nanoTime());
    try (Connection admin = DriverManager.getConnection(url);
        Statement st = admin.createStatement()) {
      st.execute(
          "CREATE TABLE " + table + "_fences (slot INT NOT NULL PRIMARY KEY, v BIGINT NOT NULL)");
      st.execute(
          "CREATE TABLE "
              + table
              + " (name VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,"
              + " owner VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,"
              + " holds INT NOT NULL, token BIGINT NOT NULL, expires_at BIGINT NOT NULL,"
              + " holder VARCHAR(200) CHARACTER SET utf8mb4, granted_at BIGINT, grant_nonce BIGINT)"
              + " ENGINE = InnoDB");
      try {
        JdbcLockSettings settings =
            JdbcLockSettings.of(url).withTable(table).withDatabase(JdbcDatabase.MYSQL);
        String name = "pad-" + UUID.randomUUID();
        assertThatThrownBy(
                () -> {
                  try (LockClient client =
                          JdbcLocks.newClient(settings, LockClientOptions.defaults());
                      LockClient other =
                          JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
                    client.lock(name).tryAcquire().orElseThrow();
                    assertThat(other.lock(name + " ").tryAcquire())
                        .as("'%s ' is a lock of its own", name)
                        .isPresent();
                  }
                })
            .as("refused at start, naming the column")
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining(table + ".name");
      } finally {
        st.execute("DROP TABLE IF EXISTS " + table + ", " + table + "_fences");
      }
    }
  }
}
