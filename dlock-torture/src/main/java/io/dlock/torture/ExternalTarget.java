package io.dlock.torture;

import io.dlock.LockClients;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server this process did not start and must not restart (the machine's Redis, PostgreSQL or
 * MariaDB, named by {@code DLOCK_TEST_REDIS_URI}, {@code DLOCK_TEST_POSTGRES_URL} or {@code
 * DLOCK_TEST_MYSQL_URL}): every scenario but {@link Scenario#RESTART} runs against it, through the
 * same per-worker proxies.
 */
final class ExternalTarget implements Target {
  private static final Pattern HOST_PORT = Pattern.compile("//([^/:@?]+|\\[[^]]+]):(\\d+)");

  private final String name;
  private final String uri;
  private final InetSocketAddress server;
  private final Map<String, String> properties;
  private final String mode;

  private ExternalTarget(String name, String uri, Map<String, String> properties) {
    this.name = name;
    this.mode = properties.getOrDefault("mode", "lease-row");
    this.uri = uri;
    this.properties = properties;
    Matcher m = HOST_PORT.matcher(uri);
    if (!m.find()) {
      throw new IllegalArgumentException(
          "external server URI must name host:port after //, got " + LockClients.redact(uri));
    }
    String host = m.group(1).replace("[", "").replace("]", "");
    this.server = new InetSocketAddress(host, Integer.parseInt(m.group(2)));
  }

  /** The machine's Redis, as {@code redis://host:port[/db]}. */
  static ExternalTarget redis(String uri) {
    return new ExternalTarget("redis-external", uri, Map.of());
  }

  /** The machine's PostgreSQL, as a {@code jdbc:postgresql://host:port/db?...} URL. */
  static ExternalTarget postgres(String url) {
    return new ExternalTarget(
        "postgres-external", url, Map.of("mode", "lease-row", "createSchema", "true"));
  }

  /**
   * The machine's MariaDB, as a {@code jdbc:mariadb://host:port/db?...} URL, in a dlock-jdbc mode
   * ({@code lease-row}, {@code session}: GET_LOCK, or {@code row}).
   */
  static ExternalTarget mariadb(String url, String mode) {
    return new ExternalTarget(
        mode.equals("lease-row") ? "mariadb" : "mariadb-" + mode,
        url,
        Map.of("mode", mode, "createSchema", "true"));
  }

  /**
   * The machine's MariaDB in a dlock-jdbc mode, speaking the MySQL dialect (the statements a MySQL
   * 8 deployment runs), in a table of its own.
   */
  static ExternalTarget mysql(String url, String mode) {
    return new ExternalTarget(
        mode.equals("lease-row") ? "mysql" : "mysql-" + mode,
        url,
        Map.of(
            "mode", mode,
            "createSchema", "true",
            "database", "mysql",
            "table", "dlock_torture_mysql"));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public List<InetSocketAddress> servers() {
    return List.of(server);
  }

  @Override
  public String uri(List<Integer> ports) {
    return HOST_PORT.matcher(uri).replaceFirst("//127.0.0.1:" + ports.get(0));
  }

  @Override
  public Map<String, String> properties(Duration lease) {
    return properties;
  }

  @Override
  public Duration holdAfterDeath(Duration lease) {
    return JdbcModes.holdAfterDeath(mode, lease);
  }

  @Override
  public boolean restartable() {
    return false;
  }

  @Override
  public void restart() {
    throw new UnsupportedOperationException(name + " is not this process's to restart");
  }

  @Override
  public String restartDescription() {
    return "not restarted: an external server";
  }

  @Override
  public void close() {
    // not ours
  }
}
