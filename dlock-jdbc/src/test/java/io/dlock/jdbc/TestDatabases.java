package io.dlock.jdbc;

import io.dlock.testkit.server.MariaDbServerProcess;
import io.dlock.testkit.server.PostgresServerProcess;
import java.util.Optional;

/**
 * The databases the tests run on: H2 in process; PostgreSQL from {@code DLOCK_TEST_POSTGRES_URL} or
 * else an embedded server; MariaDB from {@code DLOCK_TEST_MYSQL_URL}, or else an embedded server
 * (skipped, with the reason, where it cannot run).
 */
final class TestDatabases {
  static final String POSTGRES_URL_VARIABLE = "DLOCK_TEST_POSTGRES_URL";
  static final String MYSQL_URL_VARIABLE = "DLOCK_TEST_MYSQL_URL";
  static final String MYSQL8_URL_VARIABLE = "DLOCK_TEST_MYSQL8_URL";

  /** The table of the MySQL dialect's tests, apart from the MariaDB dialect's on one server. */
  static final String MYSQL_TABLE = "dlock_test_mysql";

  /** The table every test uses; names are unique per test, so tests never share a lock. */
  static final String TABLE = "dlock_test_locks";

  static final String H2_URL = "jdbc:h2:mem:dlock-tests;DB_CLOSE_DELAY=-1";

  private TestDatabases() {}

  static Optional<String> externalPostgres() {
    return nonEmpty(System.getenv(POSTGRES_URL_VARIABLE));
  }

  static Optional<String> externalMariaDb() {
    return nonEmpty(System.getenv(MYSQL_URL_VARIABLE));
  }

  /** Why the MariaDB tests are skipped, when they are. */
  static final String NO_MARIADB =
      "no MariaDB: DLOCK_TEST_MYSQL_URL is not set and the embedded MariaDB cannot run on this"
          + " machine (the reason is logged as a warning)";

  /**
   * The external MariaDB if configured, else the embedded one (started on first use); empty, with
   * the reason logged once, where neither can be had.
   */
  static Optional<String> mariaDb() {
    Optional<String> external = externalMariaDb();
    if (external.isPresent()) {
      return external;
    }
    try {
      return Optional.of(MariaDbServerProcess.shared().url());
    } catch (RuntimeException e) {
      if (!embeddedMariaDbFailureLogged) {
        embeddedMariaDbFailureLogged = true;
        org.slf4j.LoggerFactory.getLogger(TestDatabases.class).warn("{}", e.getMessage());
      }
      return Optional.empty();
    }
  }

  private static volatile boolean embeddedMariaDbFailureLogged;

  /** Why the MySQL 8 tests are skipped, when they are. */
  static final String NO_MYSQL8 =
      "no MySQL 8: DLOCK_TEST_MYSQL8_URL is not set (MySQL 8 server binaries are not on Maven"
          + " Central; the MySQL dialect runs on MariaDB in the MySqlOnMariaDb* tests)";

  /** The MySQL 8 named by {@code DLOCK_TEST_MYSQL8_URL} (a {@code jdbc:mysql:} URL), if any. */
  static Optional<String> mySql8() {
    return nonEmpty(System.getenv(MYSQL8_URL_VARIABLE));
  }

  /** Whether there is a MySQL 8 to test against (for {@code @EnabledIf}). */
  static boolean hasMySql8() {
    return mySql8().isPresent();
  }

  /** Settings of the MySQL dialect, on MariaDB or MySQL 8, in its own table. */
  static JdbcLockSettings mySqlSettings(String url, JdbcLockMode mode) {
    return JdbcLockSettings.of(url)
        .withTable(MYSQL_TABLE)
        .withCreateSchema(true)
        .withMode(mode)
        .withDatabase(JdbcDatabase.MYSQL);
  }

  /** Whether there is a MariaDB to test against (for {@code @EnabledIf}). */
  static boolean hasMariaDb() {
    return mariaDb().isPresent();
  }

  /** The external PostgreSQL if configured, else the embedded one (started on first use). */
  static String postgres() {
    return externalPostgres().orElseGet(() -> PostgresServerProcess.shared().url());
  }

  /** A URL of the same dialect on a loopback port where nothing listens. */
  static String unreachable(String url) {
    int port = io.dlock.testkit.server.RedisServerProcess.freePort();
    if (url.startsWith("jdbc:postgresql:")) {
      return "jdbc:postgresql://127.0.0.1:" + port + "/test?user=postgres";
    }
    if (url.startsWith("jdbc:mysql:")) {
      return "jdbc:mysql://127.0.0.1:" + port + "/test?user=root";
    }
    if (url.startsWith("jdbc:mariadb:")) {
      return "jdbc:mariadb://127.0.0.1:" + port + "/test?user=root";
    }
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:nowhere";
  }

  static JdbcLockSettings settings(String url) {
    return JdbcLockSettings.of(url).withTable(TABLE).withCreateSchema(true);
  }

  static JdbcLockSettings settings(String url, JdbcLockMode mode) {
    return settings(url).withMode(mode);
  }

  private static Optional<String> nonEmpty(String value) {
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(value);
  }
}
