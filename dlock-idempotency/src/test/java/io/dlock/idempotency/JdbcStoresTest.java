package io.dlock.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The contract on one database; subclasses say which. */
abstract class JdbcStoresTest extends IdempotencyStoreContractTest {
  private static final AtomicInteger TABLES = new AtomicInteger();
  static final String PREFIX = "idem_test_";

  /**
   * Tables that a test drops and makes again are this JVM's own: the MariaDB classes of two test
   * JVMs share the external server's database.
   */
  private static final String OWN =
      Long.toString(ThreadLocalRandom.current().nextLong(1L << 30, 1L << 35), 36);

  static String url;
  static HikariDataSource pool;
  private static final List<String> retentionPrefixes = new ArrayList<>();

  static void open(String databaseUrl) {
    url = databaseUrl;
    pool = TestDatabases.pool(url, 20);
    TestDatabases.stores(pool, PREFIX);
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }

  @Override
  TokenStore tokenStore(Duration retention) {
    // A table per retention setting keeps each test's tombstones apart.
    String prefix = PREFIX + "r" + TABLES.incrementAndGet() + "_";
    JdbcIdempotency db =
        JdbcIdempotency.on(pool, TestDatabases.settings(prefix).withTokenRetention(retention));
    db.createSchema();
    retentionPrefixes.add(prefix);
    return db.tokenStore();
  }

  @Override
  DedupStore dedupStore() {
    return JdbcIdempotency.on(pool, TestDatabases.settings(PREFIX)).dedupStore();
  }

  /**
   * Keys differing only in case or trailing spaces are claimed apart: on MariaDB the columns were
   * VARCHAR in the database's default collation (case-insensitive, PAD SPACE), so "Key", "key" and
   * "key " were one claim.
   */
  @Test
  void keysDifferingOnlyInCaseOrTrailingSpacesAreClaimedApart() throws Exception {
    String prefix = PREFIX + "exact_" + OWN + "_";
    try {
      DedupRecords records = DedupRecords.on(TestDatabases.stores(pool, prefix).dedupStore());
      for (String key : List.of("Key", "key", "key ")) {
        assertThat(records.claim(key, "fp", "request " + key))
            .as("a claim of '%s'", key)
            .isInstanceOf(ClaimOutcome.Claimed.class);
      }
    } finally {
      dropTables(prefix);
    }
  }

  /** A table of the wrong shape (a column missing) fails at use, saying what to do. */
  @Test
  void aTableLackingAColumnFailsNamingCreateSchemaAndTheDdl() throws Exception {
    String prefix = PREFIX + "shape_" + OWN + "_";
    try {
      execute(
          "CREATE TABLE "
              + prefix
              + "tokens (token_hash VARCHAR(64) NOT NULL PRIMARY KEY, expires_at BIGINT NOT NULL,"
              + " consumed_at BIGINT, forget_at BIGINT NOT NULL)");
      TokenStore tokens =
          JdbcIdempotency.on(pool, JdbcIdempotencySettings.defaults().withTablePrefix(prefix))
              .tokenStore();
      IssuedToken token = tokens.issue(Duration.ofMinutes(1));
      assertThatThrownBy(() -> tokens.consume(token.value(), "request"))
          .isInstanceOf(IdempotencyStoreException.class)
          .hasMessageContaining("consumed_by")
          .hasMessageContaining("a table lacks a column")
          .hasMessageContaining("createSchema()");
    } finally {
      dropTables(prefix);
    }
  }

  @Override
  List<String> crashingClaimantArgs() {
    return List.of("jdbc", url, PREFIX);
  }

  private static void dropTables(String prefix) throws SQLException {
    execute(
        "DROP TABLE IF EXISTS " + prefix + "tokens", "DROP TABLE IF EXISTS " + prefix + "dedup");
  }

  private static void execute(String... statements) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }
}
