package io.dlock.spring;

import io.dlock.testkit.server.RedisServerProcess;

/**
 * One real redis-server for the test JVM, started on first use on a free loopback port and stopped
 * when the JVM exits. Tests that stop a server start their own.
 */
final class TestRedis {
  private TestRedis() {}

  private static final class Holder {
    static final RedisServerProcess SERVER = start();

    private static RedisServerProcess start() {
      RedisServerProcess server = RedisServerProcess.start();
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "stop-test-redis"));
      return server;
    }
  }

  /** The server's URI. */
  static String uri() {
    return Holder.SERVER.uri();
  }
}
