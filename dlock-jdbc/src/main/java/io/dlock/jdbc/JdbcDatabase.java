package io.dlock.jdbc;

import java.util.Locale;

/**
 * The databases dlock-jdbc speaks, for {@link JdbcLockSettings#withDatabase(JdbcDatabase)}. By
 * default the database is read from the connection's metadata; naming one is needed only to run the
 * MySQL statements on MariaDB (which they support unchanged), for instance to test what a MySQL 8
 * deployment will run.
 */
public enum JdbcDatabase {
  /** PostgreSQL 12 and later: sequences, {@code INSERT ... RETURNING}, advisory locks, NOTIFY. */
  POSTGRESQL,
  /** MariaDB 10.5 and later: sequences and {@code INSERT ... RETURNING}, {@code GET_LOCK}. */
  MARIADB,
  /**
   * MySQL 8.0 and later, or MariaDB: no sequences and no {@code RETURNING}, so tokens come from
   * counter rows and acquisitions take more round trips (see docs/jdbc.md).
   */
  MYSQL,
  /** H2 2.x, for tests and embedded use. */
  H2;

  /**
   * The database of a property value: {@code postgresql}, {@code mariadb}, {@code mysql} or {@code
   * h2}, in any case.
   *
   * @throws IllegalArgumentException naming the property and the allowed values otherwise
   */
  public static JdbcDatabase of(String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "postgresql", "postgres" -> POSTGRESQL;
      case "mariadb" -> MARIADB;
      case "mysql" -> MYSQL;
      case "h2" -> H2;
      default ->
          throw new IllegalArgumentException(
              "database must be one of postgresql, mariadb, mysql, h2, but was '" + value + "'");
    };
  }
}
