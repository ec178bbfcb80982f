package io.dlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLNonTransientConnectionException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Data sources whose connections lose a commit (autocommit turned back on, which ends a grant's
 * transaction in the MySQL family) with the connection, once {@code armed}: either the server
 * applied it and only its answer is lost, or it never reached the server (rolled back, as the
 * server does when the session dies first). Either way the caller sees a dead connection (SQLState
 * 08S01) and the pool drops it.
 */
final class LosingCommits {
  private LosingCommits() {}

  /** The commit is applied; its answer is lost. */
  static DataSource answerLost(DataSource pool, AtomicBoolean armed) {
    return wrap(pool, armed, true, () -> {});
  }

  /** The commit never reaches the server; {@code meanwhile} runs before the caller hears of it. */
  static DataSource neverApplied(DataSource pool, AtomicBoolean armed, Runnable meanwhile) {
    return wrap(pool, armed, false, meanwhile);
  }

  private static DataSource wrap(
      DataSource pool, AtomicBoolean armed, boolean applied, Runnable meanwhile) {
    return (DataSource)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(pool, method, args);
              return method.getName().equals("getConnection")
                  ? losing((Connection) result, armed, applied, meanwhile)
                  : result;
            });
  }

  private static Connection losing(
      Connection real, AtomicBoolean armed, boolean applied, Runnable meanwhile) {
    return (Connection)
        Proxy.newProxyInstance(
            LosingCommits.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              boolean commit =
                  method.getName().equals("setAutoCommit")
                      && Boolean.TRUE.equals(args[0])
                      && !real.getAutoCommit();
              if (commit && armed.compareAndSet(true, false)) {
                if (applied) {
                  invoke(real, method, args);
                } else {
                  real.rollback();
                }
                meanwhile.run();
                real.abort(Runnable::run); // the pool drops it
                throw new SQLNonTransientConnectionException(
                    applied
                        ? "the connection died with the commit's answer (test)"
                        : "the connection died before the commit reached the server (test)",
                    "08S01");
              }
              return invoke(real, method, args);
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
