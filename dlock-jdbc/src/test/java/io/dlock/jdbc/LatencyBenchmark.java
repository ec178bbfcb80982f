package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Acquire+release latency on PostgreSQL: dlock's three modes next to ShedLock's JDBC provider, on
 * the same database and pool size, interleaved round by round so that both see the same machine
 * load. Prints numbers; asserts only that every acquisition succeeded (no timing assertions).
 *
 * <p>Run: {@code ./mvnw -B -pl dlock-jdbc verify -Ddlock.bench=true -Dtest=LatencyBenchmark
 * -Dsurefire.failIfNoSpecifiedTests=false} (with {@code DLOCK_TEST_POSTGRES_URL} set, or on the
 * embedded PostgreSQL).
 */
@EnabledIfSystemProperty(
    named = "dlock.bench",
    matches = "true",
    disabledReason = "a benchmark: run with -Ddlock.bench=true")
class LatencyBenchmark {
  private static final int WARMUP = 2000;
  private static final int ROUNDS = 10;
  private static final int PER_ROUND = 1000;
  private static final int NAMES = 16;

  interface Subject {
    void acquireAndRelease();
  }

  @Test
  void acquireReleaseLatencyOnPostgres() throws Exception {
    String url = TestDatabases.postgres();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(5);
    try (HikariDataSource shedPool = new HikariDataSource(config);
        LockClient dlock =
            JdbcLocks.newClient(TestDatabases.settings(url), LockClientOptions.defaults());
        LockClient session =
            JdbcLocks.newClient(
                TestDatabases.settings(url, JdbcLockMode.SESSION), LockClientOptions.defaults());
        LockClient row =
            JdbcLocks.newClient(
                TestDatabases.settings(url, JdbcLockMode.ROW), LockClientOptions.defaults())) {
      try (Connection c = shedPool.getConnection();
          Statement st = c.createStatement()) {
        st.execute(
            "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL PRIMARY KEY,"
                + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL,"
                + " locked_by VARCHAR(255) NOT NULL)");
      }
      LockProvider shedlock = new JdbcLockProvider(shedPool, "shedlock");
      // Both rotate over 16 names: ShedLock compares lock_until with a clock truncated to
      // milliseconds, so it cannot take a name again within the millisecond it released it.
      String run = UUID.randomUUID().toString().substring(0, 8);
      String[] shedNames = new String[NAMES];
      DistributedLock[] leaseRows = new DistributedLock[NAMES];
      DistributedLock[] sessions = new DistributedLock[NAMES];
      DistributedLock[] rows = new DistributedLock[NAMES];
      for (int i = 0; i < NAMES; i++) {
        shedNames[i] = "bench-" + run + "-" + i;
        leaseRows[i] = dlock.lock("bench-" + run + "-" + i);
        sessions[i] = session.lock("bench-session-" + run + "-" + i);
        rows[i] = row.lock("bench-row-" + run + "-" + i);
      }
      int[] next = {0, 0, 0, 0};

      Map<String, Subject> subjects = new LinkedHashMap<>();
      subjects.put(
          "dlock lease row",
          () -> {
            DistributedLock leaseRow = leaseRows[next[0]++ % NAMES];
            try (Lease lease = leaseRow.tryAcquire().orElseThrow()) {
              lease.fencingToken();
            }
          });
      subjects.put(
          "dlock session (advisory)",
          () -> {
            try (Lease lease = sessions[next[2]++ % NAMES].tryAcquire().orElseThrow()) {
              lease.fencingToken();
            }
          });
      subjects.put(
          "dlock row (FOR UPDATE)",
          () -> {
            try (Lease lease = rows[next[3]++ % NAMES].tryAcquire().orElseThrow()) {
              lease.fencingToken();
            }
          });
      subjects.put(
          "ShedLock JdbcLockProvider",
          () -> {
            SimpleLock lock =
                shedlock
                    .lock(
                        new LockConfiguration(
                            Instant.now(),
                            shedNames[next[1]++ % NAMES],
                            Duration.ofSeconds(30),
                            Duration.ZERO))
                    .orElseThrow();
            lock.unlock();
          });

      for (Subject subject : subjects.values()) {
        for (int i = 0; i < WARMUP; i++) {
          subject.acquireAndRelease();
        }
      }
      Map<String, List<Long>> samples = new LinkedHashMap<>();
      subjects.keySet().forEach(k -> samples.put(k, new ArrayList<>()));
      for (int round = 0; round < ROUNDS; round++) {
        for (Map.Entry<String, Subject> entry : subjects.entrySet()) {
          List<Long> out = samples.get(entry.getKey());
          for (int i = 0; i < PER_ROUND; i++) {
            long start = System.nanoTime();
            entry.getValue().acquireAndRelease();
            out.add(System.nanoTime() - start);
          }
        }
      }
      System.out.printf(
          Locale.ROOT,
          "%nAcquire+release latency on %s (%d rounds x %d, interleaved, 1 thread,"
              + " uncontended)%n",
          TestDatabases.externalPostgres().isPresent()
              ? "external PostgreSQL"
              : "embedded PostgreSQL",
          ROUNDS,
          PER_ROUND);
      System.out.printf(
          Locale.ROOT, "%-28s %10s %10s %10s %10s%n", "", "mean us", "p50 us", "p99 us", "ops/s");
      for (Map.Entry<String, List<Long>> entry : samples.entrySet()) {
        long[] sorted = entry.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
        double mean = Arrays.stream(sorted).average().orElse(0) / 1000.0;
        System.out.printf(
            Locale.ROOT,
            "%-28s %10.1f %10.1f %10.1f %10.0f%n",
            entry.getKey(),
            mean,
            sorted[sorted.length / 2] / 1000.0,
            sorted[(int) (sorted.length * 0.99)] / 1000.0,
            1_000_000.0 / mean);
        assertThat(sorted).hasSize(ROUNDS * PER_ROUND);
      }
    }
  }
}
