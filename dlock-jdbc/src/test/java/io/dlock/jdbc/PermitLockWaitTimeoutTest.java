package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.dlock.spi.AcquireResult;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A lock wait timeout (error 1205) is no deadlock victim, and an acquisition is not attempted again
 * after one: each attempt would wait the whole timeout again. Through MySQL Connector/J the 1205
 * arrives with SQLState 40001, which the deadlock check counted (found by review).
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PermitLockWaitTimeoutTest {
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"mariadb-driver", "connector-j"})
  void aLockWaitTimeoutIsNotAttemptedAgain(String driver) throws Exception {
    JdbcLockSettings settings = LeaseRowRenewalTest.settings("mysql-on-mariadb", "");
    String mariaUrl = TestDatabases.mariaDb().orElseThrow();
    String url = driver.equals("connector-j") ? connectorJ(mariaUrl) : mariaUrl;
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings); // creates the tables
        Connection blocker = DriverManager.getConnection(mariaUrl);
        Connection real = DriverManager.getConnection(url)) {
      try (var st = real.createStatement()) {
        st.execute("SET SESSION innodb_lock_wait_timeout = 1");
      }
      MySqlPermitStatements statements =
          new MySqlPermitStatements(settings.table(), Duration.ofSeconds(30));
      PermitAcquisition acquisition = new PermitAcquisition(statements, System::nanoTime);
      String s = "lock-wait-" + UUID.randomUUID();
      assertThat(acquisition.acquire(real, s, 2, 1, "t:a", "h", 30_000, System.nanoTime()))
          .isInstanceOf(AcquireResult.Granted.class);

      blocker.setAutoCommit(false);
      try (PreparedStatement ps =
          blocker.prepareStatement(
              "SELECT fence FROM " + statements.semaphores + " WHERE name = ? FOR UPDATE")) {
        ps.setString(1, s);
        ps.executeQuery().close();
      }
      AtomicInteger draws = new AtomicInteger();
      Connection counted = countingDraws(real, "UPDATE " + statements.semaphores, draws);
      SQLException e =
          catchThrowableOfType(
              SQLException.class,
              () -> acquisition.acquire(counted, s, 2, 1, "t:b", "h", 30_000, System.nanoTime()));
      blocker.rollback();
      assertThat(e.getErrorCode()).isEqualTo(1205);
      assertThat(draws.get()).as("attempts at the counter row's lock").isEqualTo(1);
    }
  }

  private static Connection countingDraws(Connection c, String prefix, AtomicInteger n) {
    return (Connection)
        Proxy.newProxyInstance(
            PermitLockWaitTimeoutTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("prepareStatement")
                  && ((String) args[0]).startsWith(prefix)) {
                n.incrementAndGet();
              }
              try {
                return method.invoke(c, args);
              } catch (InvocationTargetException ex) {
                throw ex.getCause();
              }
            });
  }

  private static String connectorJ(String mariaDbUrl) {
    Matcher m = Pattern.compile("jdbc:mariadb://([^/]+)/([^?]*)\\?(.*)").matcher(mariaDbUrl);
    assertThat(m.matches()).isTrue();
    return "jdbc:mysql://" + m.group(1) + "/" + m.group(2) + "?" + m.group(3) + "&sslMode=DISABLED";
  }
}
