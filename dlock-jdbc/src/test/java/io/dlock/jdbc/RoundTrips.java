package io.dlock.jdbc;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the round trips a connection is asked for: the statements it runs, its commits and
 * rollbacks, and its changes of autocommit (each a request on the MySQL family's drivers).
 */
final class RoundTrips {
  private final AtomicInteger sent = new AtomicInteger();

  /** Starts counting again from 0. */
  void reset() {
    sent.set(0);
  }

  /** The round trips counted since the last {@link #reset}. */
  int sent() {
    return sent.get();
  }

  /** {@code c}, counting what it sends. */
  Connection counting(Connection c) {
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              String m = method.getName();
              if (m.equals("commit")
                  || m.equals("rollback")
                  || (m.equals("setAutoCommit") && !args[0].equals(c.getAutoCommit()))) {
                sent.incrementAndGet();
              }
              Object result = TestProxies.invoke(c, method, args);
              return result instanceof PreparedStatement ps ? counting(ps) : result;
            });
  }

  private PreparedStatement counting(PreparedStatement ps) {
    return (PreparedStatement)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {PreparedStatement.class},
            (proxy, method, args) -> {
              if (method.getName().startsWith("execute")) {
                sent.incrementAndGet();
              }
              return TestProxies.invoke(ps, method, args);
            });
  }
}
