package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One database that dlock-jdbc speaks: it makes the statements of each mode for that database, so
 * that the backend picks a database once, at {@link #detect}, and never asks again which one it
 * talks to. One class per database: {@link PostgresDialect}, {@link MySqlDialect}, {@link
 * MariaDbDialect} (the MySQL statements, refined), {@link H2Dialect}; the statements themselves
 * live in one class per mode and database.
 */
sealed interface JdbcDialect permits PostgresDialect, MariaDbDialect, MySqlDialect, H2Dialect {

  /** The statements of {@link JdbcLockMode#LEASE_ROW}. */
  LockStatements leaseRowStatements(String table, Duration statementTimeout);

  /** The statements of leased semaphores, which only {@link JdbcLockMode#LEASE_ROW} serves. */
  PermitStatements permitStatements(String table, Duration statementTimeout);

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
   * The dialect of the database behind {@code c}: the one its metadata names, or {@code database}
   * if given, which may differ only as {@link JdbcDatabase#MYSQL} on MariaDB.
   *
   * @throws IllegalArgumentException if the database is none of PostgreSQL, MariaDB, MySQL 8 and
   *     H2, or is not {@code database}
   */
  static JdbcDialect detect(Connection c, @Nullable JdbcDatabase database) throws SQLException {
    JdbcDatabase found = databaseOf(c.getMetaData());
    if (database != null && database != found) {
      if (!(database == JdbcDatabase.MYSQL && found == JdbcDatabase.MARIADB)) {
        throw new IllegalArgumentException(
            "database is "
                + database
                + " but the server is "
                + describe(c.getMetaData())
                + ": it must be the server's own ("
                + found
                + "), or MYSQL on MariaDB");
      }
    }
    return switch (database == null ? found : database) {
      case POSTGRESQL -> new PostgresDialect();
      case MARIADB -> new MariaDbDialect();
      case MYSQL -> new MySqlDialect();
      case H2 -> new H2Dialect();
    };
  }

  private static JdbcDatabase databaseOf(DatabaseMetaData meta) throws SQLException {
    String product = meta.getDatabaseProductName();
    String lower = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (lower.contains("postgresql")) {
      return JdbcDatabase.POSTGRESQL;
    }
    if (lower.contains("mariadb")
        || lower.contains("mysql") && meta.getDatabaseProductVersion().contains("MariaDB")) {
      return JdbcDatabase.MARIADB;
    }
    if (lower.contains("mysql")) {
      if (meta.getDatabaseMajorVersion() < 8) {
        throw new IllegalArgumentException(
            "dataSource must lead to MySQL 8.0 or later (FOR UPDATE NOWAIT, multiple GET_LOCKs),"
                + " but the database is '"
                + describe(meta)
                + "'");
      }
      return JdbcDatabase.MYSQL;
    }
    if (lower.equals("h2")) {
      return JdbcDatabase.H2;
    }
    throw new IllegalArgumentException(
        "dataSource must lead to PostgreSQL, MariaDB, MySQL 8 or H2, but the database is '"
            + describe(meta)
            + "'");
  }

  private static String describe(DatabaseMetaData meta) throws SQLException {
    return meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion();
  }
}
