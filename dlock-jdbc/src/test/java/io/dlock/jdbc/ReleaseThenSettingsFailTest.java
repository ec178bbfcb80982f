package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A release whose unlock went through but whose undoing of the session settings failed afterwards
 * (the connection broke, a statement failed) released the lock: it must say so (true), and tell no
 * listener the lease was taken over. The failure is injected by the application's data source,
 * whose connections refuse the statements that undo the settings while armed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReleaseThenSettingsFailTest {
  @Test
  void postgresRowReleaseIsReleasedWhenTheResetAfterTheCommitFails() throws Exception {
    releasedDespiteTheReset(TestDatabases.postgres(), JdbcLockMode.ROW, "RESET ");
  }

  @Test
  void mariaDbSessionReleaseIsReleasedWhenTheResetAfterTheUnlockFails() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    releasedDespiteTheReset(
        TestDatabases.mariaDb().orElseThrow(), JdbcLockMode.SESSION, "= DEFAULT");
  }

  private static void releasedDespiteTheReset(String url, JdbcLockMode mode, String resetMarker)
      throws Exception {
    FailingDataSource pool = new FailingDataSource(url, resetMarker);
    JdbcLockSettings settings =
        JdbcLockSettings.of(pool)
            .withTable(TestDatabases.TABLE)
            .withCreateSchema(true)
            .withMode(mode);
    String name = "reset-fails-" + mode + "-" + UUID.randomUUID();
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient stranger =
            JdbcLocks.newClient(TestDatabases.settings(url, mode), LockClientOptions.defaults())) {
      Lease lease = client.lock(name).tryAcquire().orElseThrow();
      List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
      lease.onLost(lost::add);
      pool.armed.set(true);
      boolean released = lease.release();
      pool.armed.set(false);
      assertThat(pool.refused.get()).as("the reset was refused").isTrue();
      assertThat(released).as("release() of an unlock that went through").isTrue();
      assertThat(lost).as("lost listeners of a released lease").isEmpty();
      Lease next = stranger.lock(name).tryAcquire().orElseThrow();
      assertThat(next.release()).isTrue();
    }
  }

  /** Connections that refuse statements containing {@code marker} while armed. */
  private static final class FailingDataSource extends TestDataSource {
    final AtomicBoolean armed = new AtomicBoolean();
    final AtomicBoolean refused = new AtomicBoolean();
    private final String url;
    private final String marker;

    FailingDataSource(String url, String marker) {
      this.url = url;
      this.marker = marker;
    }

    private void check(Object[] args) throws SQLException {
      if (armed.get()
          && args != null
          && args.length > 0
          && args[0] instanceof String sql
          && sql.contains(marker)) {
        refused.set(true);
        throw new SQLException("refused by the test: " + sql, "08006");
      }
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection real = DriverManager.getConnection(url);
      InvocationHandler onConnection =
          (proxy, method, args) -> {
            if (method.getName().equals("prepareStatement")) {
              check(args);
            }
            Object result = invoke(method, real, args);
            if (result instanceof Statement st && method.getName().equals("createStatement")) {
              return Proxy.newProxyInstance(
                  Statement.class.getClassLoader(),
                  new Class<?>[] {Statement.class},
                  (p, m, a) -> {
                    if (m.getName().startsWith("execute")) {
                      check(a);
                    }
                    return invoke(m, st, a);
                  });
            }
            return result;
          };
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, onConnection);
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args)
        throws Throwable {
      try {
        return m.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }
}
