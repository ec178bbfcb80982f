package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A borrowed connection is bounded by the backend's network timeout before anything is sent on it:
 * an application pool may hand out connections in autocommit off (HikariCP {@code
 * autoCommit=false}, reset on return), and the call's return to autocommit is a round trip on
 * MariaDB ({@code set autocommit=1}). Found by review (2026-12-03): run before the bound, on a
 * silent network the call thread waited in that read with the pool's timeout (none) for 847 s.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BorrowedConnectionSilentNetworkTest {
  @Test
  void anAutocommitToggleOnASilentNetworkIsBounded() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    String url = TestDatabases.mariaDb().orElseThrow();
    String host = url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$1");
    int port = Integer.parseInt(url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$2"));
    SilentProxy proxy = new SilentProxy(host, port);
    Connection physical = DriverManager.getConnection(proxy.proxied(url));
    try {
      // A pool of one connection, configured autocommit off: reset to it on every return.
      Connection pooled =
          (Connection)
              Proxy.newProxyInstance(
                  getClass().getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (p, method, args) -> {
                    if (method.getName().equals("close")) {
                      if (!physical.isClosed()) {
                        physical.rollback();
                        physical.setAutoCommit(false);
                      }
                      return null;
                    }
                    return TestProxies.invoke(physical, method, args);
                  });
      physical.setAutoCommit(false);
      DataSource onePool = new OneConnection(pooled);
      JdbcLockSettings settings =
          JdbcLockSettings.of(onePool)
              .withTable("dlock_test_borrow_silent")
              .withCreateSchema(true)
              .withMaxConcurrentCalls(1)
              .withStatementTimeout(Duration.ofSeconds(1));
      int networkTimeout = SocketTimeouts.millis(settings);
      try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
        backend.inspect("%").get(5, TimeUnit.SECONDS); // works while the network is up
        assertThat(physical.getAutoCommit()).as("the pool handed it back autocommit off").isFalse();
        proxy.silence();
        CompletableFuture<?> call = backend.inspect("%");
        try {
          call.get(networkTimeout + 3_000L, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException expected) {
          // failed within the bound: what should happen
        } catch (java.util.concurrent.TimeoutException e) {
          throw new AssertionError(
              "the call neither answered nor failed within "
                  + (networkTimeout + 3_000L)
                  + " ms (network timeout "
                  + networkTimeout
                  + " ms): its thread waits in setAutoCommit(true)'s unbounded read",
              e);
        }
      }
    } finally {
      proxy.close(); // ends the silent sockets (a stuck read sees the end), then the connection
      physical.abort(Runnable::run);
    }
  }

  private static final class OneConnection extends TestDataSource {
    private final Connection c;

    OneConnection(Connection c) {
      this.c = c;
    }

    @Override
    public Connection getConnection() {
      return c;
    }
  }
}
