package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * One database that dlock-jdbc speaks: it makes the statements of each mode for that database, so
 * that the backend picks a database once, at {@link #detect}, and never asks again which one it
 * talks to. One class per database: {@link PostgresDialect}, {@link MariaDbDialect}, {@link
 * H2Dialect}; the statements themselves live in one class per mode and database.
 */
sealed interface JdbcDialect permits PostgresDialect, MariaDbDialect, H2Dialect {

  /** The statements of {@link JdbcLockMode#LEASE_ROW}. */
  LockStatements leaseRowStatements(String table, Duration statementTimeout);

  /**
   * The statements of {@link JdbcLockMode#SESSION}; {@code c} is the connection being set up, from
   * which a dialect may read the server's version.
   *
   * @throws IllegalArgumentException if the database has no session-level locks
   */
  HeldLockStatements sessionLockStatements(String table, Duration statementTimeout, Connection c)
      throws SQLException;

  /** The statements of {@link JdbcLockMode#ROW}; {@code c} as for the session statements. */
  HeldLockStatements rowLockStatements(String table, Duration statementTimeout, Connection c)
      throws SQLException;

  /**
   * The channel on which releases of the table's locks are announced (PostgreSQL's {@code NOTIFY});
   * empty where the database announces none and the core retries with backoff.
   */
  Optional<String> releaseChannel(String table);

  /**
   * The dialect of the database behind {@code c}, from its metadata.
   *
   * @throws IllegalArgumentException if it is none of PostgreSQL, MariaDB and H2
   */
  static JdbcDialect detect(Connection c) throws SQLException {
    DatabaseMetaData meta = c.getMetaData();
    String product = meta.getDatabaseProductName();
    String lower = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (lower.contains("postgresql")) {
      return new PostgresDialect();
    }
    if (lower.contains("mariadb")
        || lower.contains("mysql") && meta.getDatabaseProductVersion().contains("MariaDB")) {
      return new MariaDbDialect();
    }
    if (lower.equals("h2")) {
      return new H2Dialect();
    }
    throw new IllegalArgumentException(
        "dataSource must lead to PostgreSQL, MariaDB or H2, but the database is '"
            + product
            + " "
            + meta.getDatabaseProductVersion()
            + "'"
            + (lower.contains("mysql")
                ? " (MySQL lacks the sequences and INSERT ... RETURNING that one-statement"
                    + " acquisition needs; see docs/jdbc.md)"
                : ""));
  }
}
