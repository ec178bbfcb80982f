package io.dlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLNonTransientConnectionException;
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
              Object result = invoke(pool, method, args);
              return method.getName().equals("getConnection")
                  ? losingStatements((Connection) result, armed, sqlPrefix)
                  : result;
            });
  }

  private static Connection losingStatements(
      Connection real, AtomicBoolean armed, String sqlPrefix) {
    return (Connection)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object result = invoke(real, method, args);
              if (method.getName().equals("prepareStatement")
                  && ((String) args[0]).strip().startsWith(sqlPrefix)) {
                return losing((PreparedStatement) result, real, armed);
              }
              return result;
            });
  }

  private static PreparedStatement losing(
      PreparedStatement statement, Connection connection, AtomicBoolean armed) {
    return (PreparedStatement)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {PreparedStatement.class},
            (proxy, method, args) -> {
              Object result = invoke(statement, method, args);
              if (method.getName().startsWith("execute")
                  && connection.getAutoCommit()
                  && armed.compareAndSet(true, false)) {
                connection.abort(Runnable::run); // the pool drops it
                throw new SQLNonTransientConnectionException(
                    "the connection died with the statement's answer (test)", "08S01");
              }
              return result;
            });
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
