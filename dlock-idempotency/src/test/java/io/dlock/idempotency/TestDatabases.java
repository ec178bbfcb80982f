package io.dlock.idempotency;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import io.dlock.testkit.server.MariaDbServerProcess;
import io.dlock.testkit.server.PostgresServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.sql.SQLException;
import java.util.Optional;
import org.h2.tools.Server;

/**
 * The databases the tests run on: H2 in memory (served over TCP on a free loopback port, so that a
 * separate JVM can share it), and PostgreSQL and MariaDB: the servers {@code
 * DLOCK_TEST_POSTGRES_URL} and {@code DLOCK_TEST_MYSQL_URL} name, or else embedded ones.
 */
final class TestDatabases {
  static final String POSTGRES_URL_VARIABLE = "DLOCK_TEST_POSTGRES_URL";
  static final String MYSQL_URL_VARIABLE = "DLOCK_TEST_MYSQL_URL";
  static final String MYSQL8_URL_VARIABLE = "DLOCK_TEST_MYSQL8_URL";

  private TestDatabases() {}

  /** The external PostgreSQL if configured, else an embedded one (started on first use). */
  static Optional<String> postgres() {
    return env(POSTGRES_URL_VARIABLE)
        .or(() -> embedded(() -> PostgresServerProcess.shared().url()));
  }

  /** The external MariaDB if configured, else an embedded one (started on first use). */
  static Optional<String> mariaDb() {
    return env(MYSQL_URL_VARIABLE).or(() -> embedded(() -> MariaDbServerProcess.shared().url()));
  }

  /** The MySQL 8 named by {@code DLOCK_TEST_MYSQL8_URL} (a {@code jdbc:mysql:} URL), if any. */
  static Optional<String> mySql8() {
    return env(MYSQL8_URL_VARIABLE);
  }

  /**
   * The MariaDB of {@link #mariaDb()} through MySQL's own driver (Connector/J), as MySQL 8
   * deployments reach their server.
   */
  static Optional<String> mariaDbThroughConnectorJ() {
    return mariaDb()
        .map(
            url ->
                url.replaceFirst("^jdbc:mariadb:", "jdbc:mysql:")
                    + (url.contains("?") ? "&" : "?")
                    + "sslMode=DISABLED");
  }

  /** An embedded server's URL; empty, with the reason printed, where it cannot run here. */
  private static Optional<String> embedded(java.util.function.Supplier<String> start) {
    try {
      return Optional.of(start.get());
    } catch (RuntimeException e) {
      System.out.println("No embedded server: " + e.getMessage());
      return Optional.empty();
    }
  }

  /** Prints why a database's tests are skipped, and returns the reason. */
  static String skipReason(String variable) {
    String reason =
        variable
            + " is not set and the embedded server cannot run on this machine (see above):"
            + " skipping the tests on this database";
    System.out.println("SKIPPED: " + reason);
    return reason;
  }

  /** An H2 TCP server on a free loopback port; in-memory databases are created on first use. */
  static Server startH2Server() {
    try {
      return Server.createTcpServer("-tcpPort", Integer.toString(freePort()), "-ifNotExists")
          .start();
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot start H2", e);
    }
  }

  static String h2Url(Server server, String database) {
    return "jdbc:h2:tcp://127.0.0.1:"
        + server.getPort()
        + "/mem:"
        + database
        + ";DB_CLOSE_DELAY=-1";
  }

  static HikariDataSource pool(String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(10_000);
    return new HikariDataSource(config);
  }

  static JdbcIdempotencySettings settings(String tablePrefix) {
    return JdbcIdempotencySettings.defaults().withTablePrefix(tablePrefix).withCreateSchema(true);
  }

  static JdbcIdempotency stores(HikariDataSource pool, String tablePrefix) {
    JdbcIdempotency db = JdbcIdempotency.on(pool, settings(tablePrefix));
    db.createSchema();
    return db;
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Optional<String> env(String name) {
    String value = System.getenv(name);
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(value);
  }
}
