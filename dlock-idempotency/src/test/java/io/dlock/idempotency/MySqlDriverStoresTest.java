package io.dlock.idempotency;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;

/**
 * The JDBC contract on the MariaDB of {@link MariaDbStoresTest} through MySQL's own driver
 * (Connector/J), whose answers (update counts, error codes, generated keys) a MySQL 8 deployment
 * gets; the statements are the MySQL family's, the same on both servers.
 */
class MySqlDriverStoresTest extends JdbcStoresTest {
  @BeforeAll
  static void start() {
    assumeTrue(
        TestDatabases.mariaDbThroughConnectorJ().isPresent(),
        () -> TestDatabases.skipReason(TestDatabases.MYSQL_URL_VARIABLE));
    open(TestDatabases.mariaDbThroughConnectorJ().orElseThrow());
  }
}
