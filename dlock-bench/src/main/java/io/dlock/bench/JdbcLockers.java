package io.dlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.jdbc.JdbcLockSettings;
import io.dlock.jdbc.JdbcLocks;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

/** The JDBC contenders: dlock's lease row, ShedLock's JDBC provider; same pool size (4). */
final class JdbcLockers {
  static final int POOL = 4;

  private JdbcLockers() {}

  static final class Dlock implements Locker {
    private final LockClient client;

    Dlock(String url) {
      client =
          JdbcLocks.newClient(
              JdbcLockSettings.of(url)
                  .withTable("dlock_bench_locks")
                  .withCreateSchema(true)
                  .withMaxConcurrentCalls(POOL),
              LockClientOptions.defaults());
    }

    @Override
    public String name() {
      return "dlock lease row";
    }

    @Override
    public Held acquire(int thread, String key) {
      Lease lease = client.lock(key).acquire(RedisLockers.WAIT);
      return lease::release;
    }

    @Override
    public boolean rotatesKeys() {
      return true;
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /**
   * ShedLock's {@link JdbcLockProvider}: a row per name with {@code lock_until}, taken by an UPDATE
   * when expired, given back by setting {@code lock_until} to now. The closest peer to dlock's
   * lease row. It has no waiting: a busy name is retried after 1 ms.
   */
  static final class ShedLock implements Locker {
    private final HikariDataSource pool;
    private final JdbcLockProvider provider;

    ShedLock(String url) throws Exception {
      HikariConfig config = new HikariConfig();
      config.setJdbcUrl(url);
      config.setMaximumPoolSize(POOL);
      pool = new HikariDataSource(config);
      try (Connection c = pool.getConnection();
          Statement st = c.createStatement()) {
        st.execute(
            "CREATE TABLE IF NOT EXISTS shedlock_bench(name VARCHAR(64) NOT NULL PRIMARY KEY,"
                + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL,"
                + " locked_by VARCHAR(255) NOT NULL)");
      }
      provider = new JdbcLockProvider(pool, "shedlock_bench");
    }

    @Override
    public String name() {
      return "ShedLock JdbcLockProvider";
    }

    @Override
    public Held acquire(int thread, String key) throws InterruptedException {
      while (true) {
        Optional<SimpleLock> lock =
            provider.lock(
                new LockConfiguration(Instant.now(), key, Duration.ofSeconds(30), Duration.ZERO));
        if (lock.isPresent()) {
          return lock.get()::unlock;
        }
        Thread.sleep(1);
      }
    }

    @Override
    public boolean rotatesKeys() {
      return true;
    }

    @Override
    public void close() {
      pool.close();
    }
  }
}
