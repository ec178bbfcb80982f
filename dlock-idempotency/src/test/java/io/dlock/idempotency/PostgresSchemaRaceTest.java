package io.dlock.idempotency;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link JdbcIdempotency#createSchema} is safe to call from several processes at once, as its
 * Javadoc says: PostgreSQL's {@code CREATE TABLE IF NOT EXISTS} is not atomic, and a loser of the
 * race may see "type ... already exists" (SQL state 42710), which failed it before 2026-12-03 (the
 * lock tables' creation failed so in CI36).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresSchemaRaceTest {

  @Test
  void storesCreatingTheTablesAtOnceAllSucceed() throws Exception {
    try (HikariDataSource pool = TestDatabases.pool(TestDatabases.postgres().orElseThrow(), 8)) {
      ExecutorService threads = Executors.newFixedThreadPool(6);
      try {
        for (int round = 0; round < 5; round++) {
          String prefix = "idem_race_" + UUID.randomUUID().toString().substring(0, 8) + "_";
          CyclicBarrier together = new CyclicBarrier(6);
          List<Future<?>> created = new ArrayList<>();
          for (int i = 0; i < 6; i++) {
            created.add(
                threads.submit(
                    () -> {
                      together.await(30, TimeUnit.SECONDS);
                      JdbcIdempotency.on(pool, TestDatabases.settings(prefix)).createSchema();
                      return null;
                    }));
          }
          for (Future<?> f : created) {
            f.get(60, TimeUnit.SECONDS);
          }
        }
      } finally {
        threads.shutdownNow();
      }
    }
  }
}
