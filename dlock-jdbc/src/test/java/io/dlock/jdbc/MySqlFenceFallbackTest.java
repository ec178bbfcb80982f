package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The MySQL family's fence draw through a driver (or a wrapper) that hands no generated key back:
 * its {@code SELECT LAST_INSERT_ID()} fallback reads this draw, not a value an earlier statement of
 * the session left.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class MySqlFenceFallbackTest {
  @Test
  void theFallbackReadsThisDrawNotAnEarlierValue() throws Exception {
    JdbcLockSettings settings = LeaseRowRenewalTest.settings("mysql-on-mariadb", "");
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings);
        Connection real = backend.dataSource().getConnection()) {
      MySqlPermitStatements statements =
          new MySqlPermitStatements(settings.table(), Duration.ofSeconds(5));
      String s = "fallback-" + UUID.randomUUID();
      statements.createCounter(real, s);
      try (var st = real.createStatement()) {
        st.executeQuery("SELECT LAST_INSERT_ID(12345)").close(); // an earlier statement's value
      }
      Connection noKeys = noGeneratedKeys(real);
      real.setAutoCommit(false);
      Long first = statements.lockCounter(noKeys, s);
      Long second = statements.lockCounter(noKeys, s);
      real.rollback();
      real.setAutoCommit(true);
      assertThat(first).isEqualTo(0L);
      assertThat(second).isEqualTo(1L);
    }
  }

  private static Connection noGeneratedKeys(Connection c) {
    return (Connection)
        Proxy.newProxyInstance(
            MySqlFenceFallbackTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object result = TestProxies.invoke(c, method, args);
              if (!(result instanceof PreparedStatement ps)) {
                return result;
              }
              return Proxy.newProxyInstance(
                  MySqlFenceFallbackTest.class.getClassLoader(),
                  new Class<?>[] {PreparedStatement.class},
                  (p, m, a) -> {
                    if (m.getName().equals("getGeneratedKeys")) {
                      ResultSet empty =
                          c.createStatement().executeQuery("SELECT 1 FROM DUAL WHERE 1 = 0");
                      return empty;
                    }
                    return TestProxies.invoke(ps, m, a);
                  });
            });
  }
}
