package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Instances of one service started at once on a fresh database each create the lock tables
 * (createSchema on): PostgreSQL's {@code CREATE TABLE IF NOT EXISTS} is not atomic, and the losers
 * of the race saw "type ... already exists" (SQL state 42710) and failed to start (CI36, three test
 * JVMs creating the tables of an emptied database). Every one must start.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SchemaCreationRaceTest {

  @Test
  void clientsCreatingTheTablesAtOnceAllStart() throws Exception {
    String url = TestDatabases.postgres();
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      for (int round = 0; round < 5; round++) {
        String table = "dlock_race_" + UUID.randomUUID().toString().substring(0, 8);
        CyclicBarrier together = new CyclicBarrier(6);
        List<Future<JdbcLockBackend>> started = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          started.add(
              pool.submit(
                  () -> {
                    together.await(30, TimeUnit.SECONDS);
                    return JdbcLockBackend.connect(
                        JdbcLockSettings.of(url).withTable(table).withCreateSchema(true));
                  }));
        }
        for (Future<JdbcLockBackend> backend : started) {
          try (JdbcLockBackend b = backend.get(60, TimeUnit.SECONDS)) {
            assertThat(b.permits()).isPresent();
          }
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
