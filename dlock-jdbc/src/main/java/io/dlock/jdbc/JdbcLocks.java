package io.dlock.jdbc;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import javax.sql.DataSource;

/**
 * Creates lock clients on a relational database (PostgreSQL, MariaDB or H2).
 *
 * <pre>{@code
 * try (LockClient locks = JdbcLocks.newClient(dataSource)) {
 *   try (Lease lease = locks.lock("orders:42").acquire(Duration.ofSeconds(5))) {
 *     store.write(order, lease.fencingToken());
 *   }
 * }
 * }</pre>
 */
public final class JdbcLocks {
  private JdbcLocks() {}

  /**
   * A client over the application's data source, with default settings: lease rows in {@code
   * dlock_locks}, which must exist (see {@code docs/jdbc.md}).
   *
   * @throws io.dlock.BackendUnavailableException if the database cannot be reached
   * @throws IllegalStateException if the table is missing or not usable, saying how to fix it
   */
  public static LockClient newClient(DataSource dataSource) {
    return newClient(JdbcLockSettings.of(dataSource), LockClientOptions.defaults());
  }

  /** A client with these JDBC settings and client options. */
  public static LockClient newClient(JdbcLockSettings settings, LockClientOptions options) {
    return LockClients.create(JdbcLockBackend.connect(settings), options);
  }
}
