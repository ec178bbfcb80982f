package io.dlock.torture;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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

  /**
   * The longest round trip the backend waits for before it counts a server down, if it sets one
   * shorter than its lease (Redlock's node timeout). A network path slower than that is, to this
   * backend, every server down: a {@code delay} beyond it is an outage, judged as a restart is
   * (grants may wait; overlaps, stale writes and unexplained losses still fail).
   */
  default Optional<Duration> perCallBound() {
    return Optional.empty();
  }

  /** Whether {@link #restart()} is possible: not on a server this process did not start. */
  default boolean restartable() {
    return true;
  }

  /**
   * Whether workers share owner ids across processes (two workers per owner id): a mode of a
   * backend, not a backend of its own.
   */
  default boolean sharedOwnerIds() {
    return false;
  }

  /**
   * Extra arguments of every worker ({@link Worker}): the negative controls' faulty behaviours.
   * None by default.
   */
  default Map<String, String> workerArgs(Duration lease) {
    return Map.of();
  }

  /** Whether this is an idempotency store, run as a ledger of requests rather than locks. */
  default boolean ledger() {
    return false;
  }

  /** The scenarios a soak runs on this target when none are named. */
  default List<Scenario> defaultScenarios() {
    return Scenario.SOAK;
  }

  /**
   * Whether {@link #cutMember} can cut one of the backend's servers off from the others (not from
   * their clients): an ensemble whose members each have a network of their own.
   */
  default boolean membersPartitionable() {
    return false;
  }

  /**
   * Cuts one member off from the other members, silently, until {@link #healMembers}; says which,
   * for the history.
   */
  default String cutMember() {
    throw new UnsupportedOperationException(name() + " has no members to cut off from each other");
  }

  /** Ends the cut of {@link #cutMember}; says what the members were doing, for the history. */
  default String healMembers() {
    throw new UnsupportedOperationException(name() + " has no members to cut off from each other");
  }

  /** Restarts the backend as its scenario says (the whole server, or one member); blocks. */
  void restart();

  /** What {@link #restart()} does, for the report. */
  String restartDescription();

  @Override
  void close();

  /** Names the MariaDB the mariadb targets run on (CI: the machine's). */
  String MARIADB_VARIABLE = "DLOCK_TEST_MYSQL_URL";

  /**
   * Why target {@code name} cannot run on this machine (its server is not named, or what it needs
   * is missing), or empty if it can.
   */
  static java.util.Optional<String> unavailableReason(String name) {
    if (name.startsWith("mariadb") || name.startsWith("mysql")) {
      String named = System.getenv(MARIADB_VARIABLE);
      if (named == null || named.isBlank()) {
        return java.util.Optional.of(
            MARIADB_VARIABLE
                + " names no MariaDB (e.g. jdbc:mariadb://127.0.0.1:3306/test?user=root)");
      }
    }
    if (name.equals(ZooKeeperNetnsTarget.NAME)) {
      return ZooKeeperNetnsTarget.unavailableReason();
    }
    return java.util.Optional.empty();
  }

  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " must name the external server");
    }
    return value;
  }

  static Target start(String name) {
    if (name.endsWith(OwnerIdTarget.SUFFIX)) {
      String base = name.substring(0, name.length() - OwnerIdTarget.SUFFIX.length());
      if (!OwnerIdTarget.BASES.contains(base)) {
        throw new IllegalArgumentException(
            "owner ids are shared across processes on "
                + String.join(", ", OwnerIdTarget.BASES)
                + " only (JDBC session and row modes share an owner id within one client); got '"
                + name
                + "'");
      }
      return new OwnerIdTarget(start(base));
    }
    return switch (name) {
      case "redis" -> new RedisTarget(true);
      case "redis-volatile" -> new RedisTarget(false);
      case ControlTarget.LEAKY_CANCEL -> ControlTarget.leakyCancel(new RedisTarget(true));
      case ControlTarget.ABANDON_AT_CLOSE -> ControlTarget.abandonAtClose(new RedisTarget(true));
      case "redis-external" -> ExternalTarget.redis(env("DLOCK_TEST_REDIS_URI"));
      case "postgres-external" -> ExternalTarget.postgres(env("DLOCK_TEST_POSTGRES_URL"));
      case "zookeeper" -> new ZooKeeperTarget();
      case ZooKeeperNetnsTarget.NAME -> new ZooKeeperNetnsTarget();
      case "redlock" -> new RedlockTarget();
      case "idempotency-redis" -> new IdempotencyTarget("redis", false);
      case "idempotency-postgres" -> new IdempotencyTarget("postgres", false);
      case "idempotency-redis-fresh-ids" -> new IdempotencyTarget("redis", true);
      case "postgres" -> new PostgresTarget("lease-row");
      case "postgres-session" -> new PostgresTarget("session");
      case "postgres-row" -> new PostgresTarget("row");
      case "mariadb" -> ExternalTarget.mariadb(env(MARIADB_VARIABLE), "lease-row");
      case "mariadb-session" -> ExternalTarget.mariadb(env(MARIADB_VARIABLE), "session");
      case "mariadb-row" -> ExternalTarget.mariadb(env(MARIADB_VARIABLE), "row");
      case "mysql" -> ExternalTarget.mysql(env(MARIADB_VARIABLE), "lease-row");
      case "mysql-session" -> ExternalTarget.mysql(env(MARIADB_VARIABLE), "session");
      case "mysql-row" -> ExternalTarget.mysql(env(MARIADB_VARIABLE), "row");
      default ->
          throw new IllegalArgumentException(
              "target must be redis, redlock, zookeeper, zookeeper-netns (members in network"
                  + " namespaces of their own), postgres, postgres-session, postgres-row,"
                  + " mariadb, mariadb-session, mariadb-row (the MariaDB named by"
                  + " DLOCK_TEST_MYSQL_URL), mysql, mysql-session, mysql-row (the MySQL dialect on"
                  + " that MariaDB), <redis|redlock|zookeeper|postgres>-owner-id,"
                  + " idempotency-redis, idempotency-postgres, idempotency-redis-fresh-ids (its"
                  + " negative control), redis-volatile, redis-leaky-cancel, redis-abandon-at-close"
                  + " (the negative controls), redis-external or postgres-external (the servers"
                  + " named by DLOCK_TEST_REDIS_URI and DLOCK_TEST_POSTGRES_URL), got '"
                  + name
                  + "'");
    };
  }
}
