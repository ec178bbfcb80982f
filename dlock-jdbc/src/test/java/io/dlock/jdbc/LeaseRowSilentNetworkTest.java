package io.dlock.jdbc;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.BackendUnavailableException;
import io.dlock.LockInfo;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lease-row calls on a silent network (packets dropped, no reset): a call whose answer never comes
 * gives up past the statement timeout, with its connection, so that the backend's few call threads
 * are free again once the network is back. Before, the thread waited in the socket read until TCP
 * keepalive gave up (minutes to hours, or never), and every later call queued behind it.
 *
 * <p>The cut is a {@link SilentProxy}: the connections that lived through it stay silent for good,
 * as behind a firewall or NAT that lost their state, while new connections go to the server
 * directly (the data source is re-routed), as once the network is back. (The testkit's TcpProxy
 * resets the connections that lived through a cut when it heals, which frees a stuck read by itself
 * and so would hide the defect.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseRowSilentNetworkTest {
  /** A table of this test's own: it is locked whole while a call waits on it. */
  private static final String TABLE = "dlock_test_silent_calls";

  private static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(1);

  /**
   * pgjdbc's statement timeout is a cancel request, on a new connection, that the statement's
   * thread waits for when it fired: over the same silent network it takes pgjdbc's {@code
   * cancelSignalTimeout} (10 s by default) to give up, so the pool is configured as docs/jdbc.md
   * says (the backend's own pool is).
   */
  @Test
  void postgresCallsAreServedAgainSoonAfterASilentCut() throws Exception {
    String url = TestDatabases.postgres();
    callsAreServedAgainSoonAfterASilentCut(
        url + (url.contains("?") ? "&" : "?") + "cancelSignalTimeout=1");
  }

  @Test
  void mariaDbCallsAreServedAgainSoonAfterASilentCut() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    callsAreServedAgainSoonAfterASilentCut(TestDatabases.mariaDb().orElseThrow());
  }

  private static void callsAreServedAgainSoonAfterASilentCut(String url) throws Exception {
    String host = url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$1");
    int port = Integer.parseInt(url.replaceFirst("^jdbc:[a-z]+://([^:/]+):(\\d+)/.*$", "$2"));
    boolean postgres = url.startsWith("jdbc:postgresql:");
    try (SilentProxy proxy = new SilentProxy(host, port);
        Connection admin = DriverManager.getConnection(url)) {
      Rerouted dataSource = new Rerouted(proxy.proxied(url));
      // One call thread: a single call stuck in a read holds up every later one.
      JdbcLockSettings settings =
          JdbcLockSettings.of(dataSource)
              .withTable(TABLE)
              .withCreateSchema(true)
              .withMaxConcurrentCalls(1)
              .withStatementTimeout(STATEMENT_TIMEOUT);
      int networkTimeout = SocketTimeouts.millis(settings);
      try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
        // The first call waits on the server (the table is locked) when the network goes silent:
        // it was sent, and its answer, whenever it comes, is lost.
        lockTable(admin, postgres);
        CompletableFuture<List<LockInfo>> stuck = backend.inspect("%");
        await().atMost(millis(5_000)).until(() -> waitingOnTheTable(admin, postgres));
        proxy.silence();
        dataSource.url = url; // the network is back, for new connections
        unlockTable(admin, postgres);
        long healed = System.nanoTime();

        CompletableFuture<List<LockInfo>> next = backend.inspect("%");
        Duration bound = millis(networkTimeout + 2_000L);
        try {
          next.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          throw new AssertionError(
              "the backend served no call within "
                  + bound.toMillis()
                  + " ms of the network's return (network timeout "
                  + networkTimeout
                  + " ms): its call thread is still stuck in a silent read",
              e);
        }
        System.out.printf(
            "measured: %s served again %d ms after the network's return (network timeout %d ms)%n",
            postgres ? "postgresql" : "mariadb",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed),
            networkTimeout);
        assertThat(stuck)
            .as("the call on the silent connection gave up")
            .isCompletedExceptionally();
        try {
          stuck.get();
        } catch (ExecutionException e) {
          assertThat(e.getCause()).isInstanceOf(BackendUnavailableException.class);
        }
      } finally {
        admin.setAutoCommit(true);
      }
    }
  }

  /**
   * An application's pool that does not reset a connection's network timeout (here a pool of one
   * connection, which carries a timeout of its own): a call bounds the socket while it runs and
   * gives the connection back with the timeout it had.
   */
  @Test
  void aCallBoundsTheSocketAndRestoresTheConnectionsOwnTimeout() throws Exception {
    int own = 12_345;
    List<Integer> set = new CopyOnWriteArrayList<>();
    try (Connection physical = DriverManager.getConnection(TestDatabases.postgres())) {
      physical.setNetworkTimeout(Runnable::run, own);
      Connection pooled = recordingTimeouts(physical, set);
      DataSource onePool =
          new Rerouted(null) {
            @Override
            public Connection getConnection() {
              return pooled;
            }
          };
      JdbcLockSettings settings =
          JdbcLockSettings.of(onePool)
              .withTable(TABLE)
              .withCreateSchema(true)
              .withStatementTimeout(STATEMENT_TIMEOUT);
      try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
        set.clear();
        backend.inspect("%").get(5, TimeUnit.SECONDS);
      }
      assertThat(set).containsExactly(SocketTimeouts.millis(settings), own);
      assertThat(physical.getNetworkTimeout()).isEqualTo(own);
    }
  }

  /** {@code c}, whose close does nothing (a pool's connection) and whose timeouts are noted. */
  private static Connection recordingTimeouts(Connection c, List<Integer> set) {
    return (Connection)
        Proxy.newProxyInstance(
            LeaseRowSilentNetworkTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("close")) {
                return null;
              }
              if (method.getName().equals("setNetworkTimeout")) {
                set.add((Integer) args[1]);
              }
              return TestProxies.invoke(c, method, args);
            });
  }

  private static void lockTable(Connection admin, boolean postgres) throws SQLException {
    try (Statement st = admin.createStatement()) {
      if (postgres) {
        admin.setAutoCommit(false);
        st.execute("LOCK TABLE " + TABLE + " IN ACCESS EXCLUSIVE MODE");
      } else {
        st.execute("LOCK TABLES " + TABLE + " WRITE");
      }
    }
  }

  private static void unlockTable(Connection admin, boolean postgres) throws SQLException {
    if (postgres) {
      admin.rollback();
      admin.setAutoCommit(true);
    } else {
      try (Statement st = admin.createStatement()) {
        st.execute("UNLOCK TABLES");
      }
    }
  }

  /** Whether another session's statement on the table waits for the admin's lock. */
  private static boolean waitingOnTheTable(Connection admin, boolean postgres) throws SQLException {
    String sql =
        postgres
            ? "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                + " AND wait_event_type = 'Lock' AND query LIKE ?"
            : "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"
                + " AND STATE LIKE 'Waiting for table%' AND INFO LIKE ?";
    try (PreparedStatement ps = admin.prepareStatement(sql)) {
      ps.setString(1, "%" + TABLE + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  /** Opens each connection anew on {@link #url}, which the test re-routes. */
  private static class Rerouted extends TestDataSource {
    volatile String url;

    Rerouted(String url) {
      this.url = url;
    }

    @Override
    public Connection getConnection() throws SQLException {
      return DriverManager.getConnection(url);
    }
  }
}
