package io.dlock.idempotency;

import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The JDBC contract on H2 in memory, served over loopback TCP so the crash test's JVM shares it.
 */
class H2StoresTest extends JdbcStoresTest {
  private static Server server;

  @BeforeAll
  static void start() {
    server = TestDatabases.startH2Server();
    open(TestDatabases.h2Url(server, "stores"));
  }

  @AfterAll
  static void stop() {
    closePool();
    if (server != null) {
      server.stop();
    }
  }
}
