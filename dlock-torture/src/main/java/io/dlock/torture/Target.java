package io.dlock.torture;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** A backend under torture: servers this process started and may restart. */
interface Target extends AutoCloseable {

  /** {@code redis}, {@code zookeeper} or {@code postgres}. */
  String name();

  /** The servers' addresses, each of which a worker reaches through a proxy of its own. */
  List<InetSocketAddress> servers();

  /** The lock URI for a client that reaches server {@code i} at {@code 127.0.0.1:ports[i]}. */
  String uri(List<Integer> ports);

  /** Backend properties for the lock client. */
  Map<String, String> properties(Duration lease);

  /**
   * How long a dead holder may keep the lock: its lease on most backends, the session timeout on
   * ZooKeeper.
   */
  Duration holdAfterDeath(Duration lease);

  /**
   * The pass criterion for the next grant after a holder dies (or stalls, or is cut off): the time
   * it may keep the lock, one renewal interval (its last renewal may have just landed), and 1 s.
   */
  default Duration nextGrantBound(Duration lease) {
    return holdAfterDeath(lease).plus(lease.dividedBy(3)).plus(Duration.ofSeconds(1));
  }

  /** Whether {@link #restart()} is possible: not on a server this process did not start. */
  default boolean restartable() {
    return true;
  }

  /** Restarts the backend as its scenario says (the whole server, or one member); blocks. */
  void restart();

  /** What {@link #restart()} does, for the report. */
  String restartDescription();

  @Override
  void close();

  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " must name the external server");
    }
    return value;
  }

  static Target start(String name) {
    return switch (name) {
      case "redis" -> new RedisTarget(true);
      case "redis-volatile" -> new RedisTarget(false);
      case "redis-external" -> ExternalTarget.redis(env("DLOCK_TEST_REDIS_URI"));
      case "postgres-external" -> ExternalTarget.postgres(env("DLOCK_TEST_POSTGRES_URL"));
      case "zookeeper" -> new ZooKeeperTarget();
      case "postgres" -> new PostgresTarget();
      default ->
          throw new IllegalArgumentException(
              "backend must be redis, zookeeper, postgres, redis-volatile (the negative"
                  + " control), redis-external or postgres-external (the servers named by"
                  + " DLOCK_TEST_REDIS_URI and DLOCK_TEST_POSTGRES_URL), got '"
                  + name
                  + "'");
    };
  }
}
