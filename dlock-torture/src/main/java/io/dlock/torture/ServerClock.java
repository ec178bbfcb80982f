package io.dlock.torture;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The wall clock by which a target's server judges lease ends (a lease row's {@code expires_at}, a
 * key's {@code PX}), read by the coordinator on a connection of its own, straight to the server (no
 * worker's proxy): {@link ServerClockSampler} sets it beside the machine's monotonic clock, so a
 * step of the server's clock during a run is seen rather than inferred. A read that fails (the
 * server restarting) is retried on a new connection at the next sample.
 */
interface ServerClock extends AutoCloseable {

  /** The server's clock in milliseconds since the epoch. */
  long millis() throws Exception;

  /** What is read, for the report: {@code PostgreSQL clock_timestamp()}. */
  String description();

  @Override
  void close();

  /**
   * The clock of the target's first server, read with the expression the backend judges leases by;
   * empty where the server judges none by a wall clock (ZooKeeper's sessions), or where the target
   * has several (Redlock's masters each judge their own).
   */
  static Optional<ServerClock> of(Target target) {
    if (target.servers().size() != 1) {
      return Optional.empty();
    }
    String uri = target.uri(List.of(target.servers().get(0).getPort()));
    if (uri.startsWith("jdbc:postgresql:")) {
      return Optional.of(
          new Jdbc(
              uri,
              "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint",
              "PostgreSQL clock_timestamp()"));
    }
    if (uri.startsWith("jdbc:mariadb:") || uri.startsWith("jdbc:mysql:")) {
      return Optional.of(
          new Jdbc(
              uri,
              "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000",
              "MariaDB UTC_TIMESTAMP(6)"));
    }
    if (uri.startsWith("redis://")) {
      return Optional.of(new Redis(uri));
    }
    return Optional.empty();
  }

  /** A database's clock, on one JDBC connection opened again after a failure. */
  final class Jdbc implements ServerClock {
    private final String url;
    private final String sql;
    private final String description;
    private @Nullable Connection connection; // the sampler's thread only

    Jdbc(String url, String sql, String description) {
      this.url = url;
      this.sql = sql;
      this.description = description;
    }

    @Override
    public long millis() throws SQLException {
      try {
        if (connection == null) {
          DriverManager.setLoginTimeout(2);
          connection = DriverManager.getConnection(url);
          connection.setNetworkTimeout(Runnable::run, 2_000);
        }
        try (PreparedStatement ps = connection.prepareStatement(sql);
            ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      } catch (SQLException | RuntimeException e) {
        close();
        throw e;
      }
    }

    @Override
    public String description() {
      return description;
    }

    @Override
    public void close() {
      if (connection != null) {
        try {
          connection.close();
        } catch (SQLException e) {
          // broken already
        }
        connection = null;
      }
    }
  }

  /** Redis's {@code TIME}: the clock its keys' {@code PX} ends are judged by. */
  final class Redis implements ServerClock {
    private final RedisClient client;
    private @Nullable StatefulRedisConnection<String, String> connection;

    Redis(String uri) {
      this.client = RedisClient.create(uri);
      this.client.setDefaultTimeout(Duration.ofSeconds(2));
    }

    @Override
    public long millis() {
      try {
        if (connection == null) {
          connection = client.connect();
        }
        List<String> time = connection.sync().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
      } catch (RuntimeException e) {
        dropConnection();
        throw e;
      }
    }

    private void dropConnection() {
      if (connection != null) {
        connection.close();
        connection = null;
      }
    }

    @Override
    public String description() {
      return "Redis TIME";
    }

    @Override
    public void close() {
      dropConnection();
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
  }
}
