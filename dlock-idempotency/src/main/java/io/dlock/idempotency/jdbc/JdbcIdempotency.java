package io.dlock.idempotency.jdbc;

import io.dlock.idempotency.DedupStore;
import io.dlock.idempotency.IdempotencyStoreException;
import io.dlock.idempotency.TokenStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The idempotency tables of one database, reached through a {@link DataSource} (pooled by the
 * application): {@link #tokenStore()} and {@link #dedupStore()} use it. The dialect (PostgreSQL,
 * MySQL/MariaDB or H2) is detected from the first connection. Every statement runs in auto-commit
 * on a connection of its own, so a store call never joins, or waits for, the caller's transaction.
 *
 * <p>Rows are not deleted by the stores: call {@link #purgeExpired()} from a scheduled job.
 */
public final class JdbcIdempotency {
  private final DataSource dataSource;
  private final JdbcIdempotencySettings settings;
  private final ReentrantLock setup = new ReentrantLock();
  private volatile @Nullable SqlDialect dialect;

  private JdbcIdempotency(DataSource dataSource, JdbcIdempotencySettings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
  }

  /** The stores on {@code dataSource}, with these settings. */
  public static JdbcIdempotency on(DataSource dataSource, JdbcIdempotencySettings settings) {
    return new JdbcIdempotency(
        Objects.requireNonNull(dataSource, "dataSource"),
        Objects.requireNonNull(settings, "settings"));
  }

  /** One-time tokens in the table {@code prefix + "tokens"}. */
  public TokenStore tokenStore() {
    return new JdbcTokenStore(this);
  }

  /**
   * Dedup records in the table {@code prefix + "dedup"}; wrap it in {@code DedupRecords.on(...)}.
   */
  public DedupStore dedupStore() {
    return new JdbcDedupStore(this);
  }

  public JdbcIdempotencySettings settings() {
    return settings;
  }

  /**
   * Creates both tables if they do not exist. Safe to call from several processes at once.
   *
   * @throws IdempotencyStoreException if the database refused
   */
  public void createSchema() {
    call(
        "create the idempotency tables",
        (c, d) -> {
          createTables(c, d);
          return null;
        });
  }

  /**
   * Checks that the dedup table exists with every column the dedup store uses, without writing: for
   * a start-up that should fail at once, rather than at the first request, when the tables were
   * never created.
   *
   * @throws IdempotencyStoreException naming the table if it is missing, lacks a column, or the
   *     database cannot be reached
   */
  public void checkDedupTable() {
    call(
        "read the table " + settings.dedupTable(),
        (c, d) -> {
          try (PreparedStatement ps =
              prepare(
                  c,
                  "SELECT dedup_key, record_state, owner_token, fingerprint, result_data,"
                      + " expires_at, claim_attempt, claim_confirmed FROM "
                      + settings.dedupTable()
                      + " WHERE 1 = 0")) {
            ps.executeQuery().close();
          }
          return null;
        });
  }

  /** Creates the tables if they do not exist. */
  private void createTables(Connection c, SqlDialect d) throws SQLException {
    for (String ddl : ddl(d)) {
      try (Statement s = c.createStatement()) {
        s.execute(ddl);
      } catch (SQLException e) {
        // Two processes creating the same table at once: PostgreSQL may report the race as a
        // duplicate in its catalog (23505), an existing relation (42P07) or an existing row type
        // of the table (42710: PostgresSchemaRaceTest).
        if (!SqlDialect.isDuplicateKey(e)
            && !"42P07".equals(e.getSQLState())
            && !"42710".equals(e.getSQLState())) {
          throw e;
        }
      }
    }
  }

  /**
   * Deletes the token rows past their retention and the dedup records past their expiry.
   *
   * @return the number of rows deleted
   * @throws IdempotencyStoreException if the database failed
   */
  public int purgeExpired() {
    return call(
        "purge expired idempotency rows",
        (c, d) -> {
          int deleted = 0;
          for (String sql :
              List.of(
                  "DELETE FROM " + settings.tokensTable() + " WHERE forget_at <= " + d.nowMillis,
                  "DELETE FROM " + settings.dedupTable() + " WHERE expires_at <= " + d.nowMillis)) {
            try (PreparedStatement ps = prepare(c, sql)) {
              deleted += ps.executeUpdate();
            }
          }
          return deleted;
        });
  }

  private List<String> ddl(SqlDialect d) {
    return List.of(
        "CREATE TABLE IF NOT EXISTS "
            + settings.tokensTable()
            + " (token_hash "
            + d.text(64)
            + " NOT NULL PRIMARY KEY,"
            + " expires_at BIGINT NOT NULL,"
            + " consumed_at BIGINT,"
            + " forget_at BIGINT NOT NULL,"
            + " consumed_by "
            + d.text(64)
            + ")",
        "CREATE TABLE IF NOT EXISTS "
            + settings.dedupTable()
            + " (dedup_key "
            + d.text(200)
            + " NOT NULL PRIMARY KEY,"
            + " record_state CHAR(1) NOT NULL,"
            + " owner_token "
            + d.text(64)
            + " NOT NULL,"
            + " fingerprint "
            + d.text(128)
            + " NOT NULL,"
            + " result_data "
            + d.binaryType
            + ","
            + " expires_at BIGINT NOT NULL,"
            + " claim_attempt "
            + d.text(64)
            + ","
            + " claim_confirmed SMALLINT)");
  }

  /** A unit of work on one connection, given the dialect. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c, SqlDialect dialect) throws SQLException;
  }

  /** Runs {@code work} on a connection in auto-commit; SQL failures become store exceptions. */
  <T> T call(String what, Work<T> work) {
    try (Connection c = dataSource.getConnection()) {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      SqlDialect d = dialect(c);
      return work.run(c, d);
    } catch (SQLException e) {
      throw new IdempotencyStoreException(
          "The database failed to "
              + what
              + ": "
              + e.getMessage()
              + (e.getSQLState() == null ? "" : " [SQLState " + e.getSQLState() + "]")
              + (SqlDialect.isUndefinedColumn(e) ? missingColumnsHint() : ""),
          e);
    }
  }

  /** What to do about a table of the wrong shape (made by hand, another tool or a typo). */
  private String missingColumnsHint() {
    return " (a table lacks a column: create the tables with createSchema() or"
        + " JdbcIdempotencySettings.withCreateSchema(true), or with the DDL in docs/idempotency.md,"
        + " under the prefix '"
        + settings.tablePrefix()
        + "')";
  }

  PreparedStatement prepare(Connection c, String sql) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    ps.setQueryTimeout((int) Math.max(1, settings.statementTimeout().toSeconds()));
    return ps;
  }

  private SqlDialect dialect(Connection c) throws SQLException {
    SqlDialect known = dialect;
    if (known != null) {
      return known;
    }
    // Held only while one connection's metadata is read and, at most once, the tables created.
    setup.lock();
    try {
      known = dialect;
      if (known == null) {
        known = SqlDialect.detect(c);
        if (settings.createSchema()) {
          createTables(c, known);
        }
        dialect = known;
      }
      return known;
    } finally {
      setup.unlock();
    }
  }
}
