package io.dlock.idempotency.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/**
 * What differs between the databases: the database clock in epoch milliseconds, the binary column
 * type, and how a duplicate key is reported. Everything else is standard SQL.
 */
enum SqlDialect {
  POSTGRESQL("CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS BIGINT)", "BYTEA"),
  /**
   * The MySQL family: MySQL 8 and MariaDB run the same statements (standard SQL, no {@code
   * RETURNING}, no sequences: claims are inserts that a duplicate key refuses, and updates are
   * conditional on the claim's owner and state).
   */
  MYSQL("CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)", "LONGBLOB"),
  H2("CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)", "VARBINARY");

  /**
   * The type of a text column of at most {@code chars} characters that is compared exactly: the
   * MySQL family's default collations may ignore case ({@code _ci}) and trailing spaces (PAD SPACE,
   * {@code utf8mb4_bin} too), under which "Key", "key" and "key " would be one dedup key. MySQL 8
   * and MariaDB name their binary NO PAD collations differently, so it is a binary string there (4
   * bytes per character of UTF-8), compared byte for byte.
   */
  String text(int chars) {
    return this == MYSQL ? "VARBINARY(" + 4 * chars + ")" : "VARCHAR(" + chars + ")";
  }

  /** An expression giving the database's clock in epoch milliseconds. */
  final String nowMillis;

  final String binaryType;

  SqlDialect(String nowMillis, String binaryType) {
    this.nowMillis = nowMillis;
    this.binaryType = binaryType;
  }

  /**
   * Whether {@code e} reports a duplicate primary or unique key: SQLState 23505 (PostgreSQL, H2 and
   * the SQL standard), MySQL/MariaDB error 1062 (SQLState 23000, which also covers other integrity
   * violations, hence the error code).
   */
  static boolean isDuplicateKey(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql) {
        if ("23505".equals(sql.getSQLState()) || sql.getErrorCode() == 1062) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Whether {@code e} reports a column that does not exist: SQLState 42703 (PostgreSQL), 42S22
   * (MySQL, MariaDB, H2).
   */
  static boolean isUndefinedColumn(SQLException e) {
    return "42703".equals(e.getSQLState()) || "42S22".equals(e.getSQLState());
  }

  /**
   * Whether {@code e} is a transient conflict worth repeating the statement for: a deadlock or
   * serialization failure (SQLState class 40, MySQL error 1213).
   */
  static boolean isTransientConflict(SQLException e) {
    String state = e.getSQLState();
    return state != null && state.startsWith("40") || e.getErrorCode() == 1213;
  }

  static SqlDialect detect(Connection c) throws SQLException {
    DatabaseMetaData meta = c.getMetaData();
    String product = String.valueOf(meta.getDatabaseProductName()).toLowerCase(Locale.ROOT);
    if (product.contains("postgresql")) {
      return POSTGRESQL;
    }
    if (product.contains("mariadb") || product.contains("mysql")) {
      return MYSQL;
    }
    if (product.equals("h2")) {
      return H2;
    }
    throw new IllegalArgumentException(
        "dataSource must lead to PostgreSQL, MySQL, MariaDB or H2, but the database is '"
            + meta.getDatabaseProductName()
            + "'");
  }
}
