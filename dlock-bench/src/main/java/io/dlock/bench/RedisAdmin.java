package io.dlock.bench;

import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of one contender's own, and the counters read from it: calls per command from
 * {@code INFO commandstats} (commands run inside scripts are counted there under their own names),
 * the server's CPU from {@code INFO cpu}, the bytes in and out from {@code INFO stats}.
 */
final class RedisAdmin implements AutoCloseable {
  private final RedisServerProcess server;
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> redis;

  private RedisAdmin(RedisServerProcess server) {
    this.server = server;
    client = RedisClient.create(server.uri());
    connection = client.connect();
    redis = connection.sync();
  }

  /** Starts a fresh, empty redis-server on a free loopback port. */
  static RedisAdmin startServer() {
    return new RedisAdmin(RedisServerProcess.start());
  }

  String uri() {
    return server.uri();
  }

  int port() {
    return server.port();
  }

  String version() {
    return field(redis.info("server"), "redis_version");
  }

  void flushAndReset() {
    redis.flushall();
    reset();
  }

  /** CONFIG RESETSTAT: zeroes the command counters and byte counts (not the CPU). */
  void reset() {
    redis.configResetstat();
  }

  Snapshot snapshot() {
    Map<String, Long> calls = new HashMap<>();
    for (String line : redis.info("commandstats").split("\r?\n")) {
      if (line.startsWith("cmdstat_")) {
        String name = line.substring("cmdstat_".length(), line.indexOf(':'));
        int at = line.indexOf("calls=") + "calls=".length();
        int end = line.indexOf(',', at);
        if (!RedisLockers.adminCommands().contains(name) && !name.startsWith("client|")) {
          calls.put(name, Long.parseLong(line.substring(at, end)));
        }
      }
    }
    String cpu = redis.info("cpu");
    double cpuSeconds =
        Double.parseDouble(field(cpu, "used_cpu_sys"))
            + Double.parseDouble(field(cpu, "used_cpu_user"));
    String stats = redis.info("stats");
    long bytes =
        Long.parseLong(field(stats, "total_net_input_bytes"))
            + Long.parseLong(field(stats, "total_net_output_bytes"));
    return new Snapshot(calls, cpuSeconds, bytes, System.nanoTime());
  }

  private static String field(String info, String name) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1).trim();
      }
    }
    throw new IllegalStateException("INFO has no " + name);
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown(0, 2, TimeUnit.SECONDS);
    server.close();
  }

  /** Counters at one moment. Calls count since the last reset; CPU and bytes as they are. */
  record Snapshot(Map<String, Long> calls, double cpuSeconds, long bytes, long nanos) {

    long totalCalls() {
      return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    /** The calls a client sent as requests (not inside a script), per the contender's design. */
    long requests(Locker locker) {
      return calls.entrySet().stream()
          .filter(e -> locker.isRequest(e.getKey()))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }

    long requestsOf(java.util.function.Predicate<String> isRequest) {
      return calls.entrySet().stream()
          .filter(e -> isRequest.test(e.getKey()))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }

    /** Calls per command as {@code name=count}, largest first, for the tables. */
    String breakdown(double per) {
      StringBuilder out = new StringBuilder();
      calls.entrySet().stream()
          .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
          .filter(e -> e.getValue() / per >= 0.05)
          .forEach(
              e ->
                  out.append(out.length() == 0 ? "" : " ")
                      .append(e.getKey().toUpperCase(java.util.Locale.ROOT))
                      .append(' ')
                      .append(Fmt.num(e.getValue() / per)));
      return out.toString();
    }
  }
}
