package io.dlock.idempotency;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;

/** The contract on one database; subclasses say which. */
abstract class JdbcStoresTest extends IdempotencyStoreContractTest {
  private static final AtomicInteger TABLES = new AtomicInteger();
  static final String PREFIX = "idem_test_";

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

  @Override
  List<String> crashingClaimantArgs() {
    return List.of("jdbc", url, PREFIX);
  }
}
