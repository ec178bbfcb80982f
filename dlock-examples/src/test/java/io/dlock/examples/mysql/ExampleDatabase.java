package io.dlock.examples.mysql;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.testkit.server.MariaDbServerProcess;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * The database of these tests: the MariaDB (or MySQL-protocol server) that {@code
 * DLOCK_TEST_MYSQL_URL} names, or else the embedded MariaDB of dlock-testkit, started once per test
 * JVM on a free loopback port. Every table the examples use starts with {@code ex_}; every lock
 * name and SKU is unique per test, so runs against a shared server do not meet.
 */
final class ExampleDatabase {
  static final String URL_VARIABLE = "DLOCK_TEST_MYSQL_URL";

  private static String url;
  private static String unavailable;

  private ExampleDatabase() {}

  /**
   * The JDBC URL; skips the calling test (with the reason) where there is no MariaDB: the variable
   * is unset and the embedded server cannot run on this machine.
   */
  static synchronized String url() {
    if (url == null && unavailable == null) {
      String external = System.getenv(URL_VARIABLE);
      if (external != null && !external.isBlank()) {
        url = external;
      } else {
        try {
          url = MariaDbServerProcess.shared().url();
        } catch (RuntimeException e) {
          unavailable = URL_VARIABLE + " is unset and " + e.getMessage();
        }
      }
    }
    assumeTrue(url != null, () -> "no MariaDB: " + unavailable);
    return url;
  }

  /** A data source that opens a new connection (autocommit on, as JDBC's default) per call. */
  static DataSource dataSource() throws SQLException {
    return new MariaDbDataSource(url());
  }

  /** A connection of its own: a second client of the database. */
  static Connection connect() throws SQLException {
    return dataSource().getConnection();
  }

  /** A daemon thread: a flawed lock loop that ignores its interrupt cannot keep the JVM alive. */
  static Thread daemon(Runnable task) {
    Thread t = new Thread(task, "example-test");
    t.setDaemon(true);
    return t;
  }

  /** A name no other test and no earlier run uses. */
  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 13);
  }

  /**
   * Whether the row of {@code table} whose {@code column} is {@code value} can be locked right now,
   * asked from a connection of its own with {@code FOR UPDATE NOWAIT}: false if another transaction
   * holds it. The probe's own lock ends with its rollback.
   */
  static boolean rowIsFree(String table, String column, String value) throws SQLException {
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      try (PreparedStatement s =
          c.prepareStatement(
              "SELECT 1 FROM " + table + " WHERE " + column + " = ? FOR UPDATE NOWAIT")) {
        s.setString(1, value);
        try (ResultSet rs = s.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("no row " + column + " = '" + value + "' in " + table);
          }
          return true;
        }
      } catch (SQLException e) {
        if (e.getErrorCode() == 1205 || e.getErrorCode() == 3572) { // lock wait timeout, NOWAIT
          return false;
        }
        throw e;
      } finally {
        c.rollback();
      }
    }
  }
}
