package io.dlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/** What the tests' JDBC proxies share. */
final class TestProxies {
  private TestProxies() {}

  /** Calls {@code method} on {@code target}, throwing what it threw, not its reflective wrapper. */
  static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
