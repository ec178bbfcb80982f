package io.dlock.jdbc;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Data sources whose connections lose a commit with the connection, once {@code armed}: an
 * autocommit statement (the MySQL family's lease-row upsert, which is its own commit) that the
 * server applied, and whose answer is lost. The caller sees a dead connection (SQLState 08S01) and
 * the pool drops it.
 */
final class LosingCommits {
  private LosingCommits() {}

  /**
   * The first autocommit statement whose SQL starts with {@code sqlPrefix} (after leading
   * whitespace) is applied; its answer is lost.
   */
  static DataSource statementAnswerLost(DataSource pool, AtomicBoolean armed, String sqlPrefix) {
    return (DataSource)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = TestProxies.invoke(pool, method, args);
              return method.getName().equals("getConnection")
                  ? losingStatements((Connection) result, armed, sqlPrefix)
                  : result;
            });
  }

  /**
   * {@code c}, whose statements starting with {@code sqlPrefix} (after leading whitespace) run,
   * then throw a driver timeout (SQLState none), as MySQL Connector/J does when its timer fired as
   * the answer came: the statement applied, the caller hears it failed.
   */
  static Connection failingAfter(Connection c, String sqlPrefix) {
    return withStatements(
        c,
        sqlPrefix,
        (statement, method) -> {
          if (method.getName().startsWith("execute")) {
            throw new SQLTimeoutException(
                "Statement cancelled due to timeout or client request (test)");
          }
        });
  }

  /** What a test runs, on the real connection, with a statement's bound parameters. */
  @FunctionalInterface
  interface WithParameters {
    void run(Connection real, java.util.Map<Integer, Object> parameters) throws SQLException;
  }

  /**
   * {@code c}, whose first statement starting with {@code sqlPrefix} does not run: {@code before}
   * runs instead (what the statement did before InnoDB rolled it back, if anything), then it fails
   * as InnoDB's deadlock victim (error 1213, SQLState 40001). Later statements run.
   */
  static Connection deadlockOnce(Connection c, String sqlPrefix, WithParameters before) {
    AtomicBoolean armed = new AtomicBoolean(true);
    return (Connection)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object result = TestProxies.invoke(c, method, args);
              if (!method.getName().equals("prepareStatement")
                  || !((String) args[0]).strip().startsWith(sqlPrefix)) {
                return result;
              }
              PreparedStatement statement = (PreparedStatement) result;
              java.util.Map<Integer, Object> parameters = new java.util.HashMap<>();
              return Proxy.newProxyInstance(
                  LosingCommits.class.getClassLoader(),
                  new Class<?>[] {PreparedStatement.class},
                  (p, m, a) -> {
                    if (m.getName().startsWith("set") && a != null && a.length >= 2) {
                      parameters.put((Integer) a[0], a[1]);
                    }
                    if (m.getName().startsWith("execute") && armed.compareAndSet(true, false)) {
                      before.run(c, parameters);
                      throw new java.sql.SQLTransactionRollbackException(
                          "Deadlock found when trying to get lock (test)", "40001", 1213);
                    }
                    return TestProxies.invoke(statement, m, a);
                  });
            });
  }

  private static Connection losingStatements(
      Connection real, AtomicBoolean armed, String sqlPrefix) {
    return withStatements(
        real,
        sqlPrefix,
        (statement, method) -> {
          if (method.getName().startsWith("execute")
              && real.getAutoCommit()
              && armed.compareAndSet(true, false)) {
            real.abort(Runnable::run); // the pool drops it
            throw new SQLNonTransientConnectionException(
                "the connection died with the statement's answer (test)", "08S01");
          }
        });
  }

  /** What happens after a statement's method ran: nothing, or a failure thrown instead. */
  @FunctionalInterface
  private interface AfterCall {
    void after(PreparedStatement statement, Method method) throws SQLException;
  }

  /** {@code real}, whose statements starting with {@code sqlPrefix} run {@code after} each call. */
  private static Connection withStatements(Connection real, String sqlPrefix, AfterCall after) {
    return (Connection)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object result = TestProxies.invoke(real, method, args);
              if (!method.getName().equals("prepareStatement")
                  || !((String) args[0]).strip().startsWith(sqlPrefix)) {
                return result;
              }
              PreparedStatement statement = (PreparedStatement) result;
              return Proxy.newProxyInstance(
                  LosingCommits.class.getClassLoader(),
                  new Class<?>[] {PreparedStatement.class},
                  (p, m, a) -> {
                    Object answer = TestProxies.invoke(statement, m, a);
                    after.after(statement, m);
                    return answer;
                  });
            });
  }
}
