package io.dlock.redis;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.Failures;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Lettuce connections of one backend: a multiplexed command connection and a pub/sub
 * connection, to a single server or a Sentinel-managed primary ({@link RedisClient}), or to a Redis
 * Cluster ({@link RedisClusterClient}). Lettuce follows Sentinel failovers and Cluster topology
 * changes itself.
 */
final class RedisConnections {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(RedisConnections.class);

  /** How {@link #close} ended. */
  enum Closed {
    /** Connections closed and the client shut down (its own threads ended) within the bound. */
    CLOSED,
    /**
     * Not done within the bound: the connections are closed and the client's shutdown goes on in
     * the background, bounded by Lettuce's own 2 s timeout for its event loops.
     */
    STILL_CLOSING
  }

  final RedisClusterAsyncCommands<String, String> commands;
  final StatefulRedisPubSubConnection<String, String> signals;
  final boolean cluster;
  private final java.util.function.Function<Duration, Closed> closer;

  private RedisConnections(
      RedisClusterAsyncCommands<String, String> commands,
      StatefulRedisPubSubConnection<String, String> signals,
      boolean cluster,
      java.util.function.Function<Duration, Closed> closer) {
    this.commands = commands;
    this.signals = signals;
    this.cluster = cluster;
    this.closer = closer;
  }

  static RedisConnections open(RedisLockSettings settings) {
    String uri = settings.uri();
    if (uri.startsWith("redis-cluster://") || uri.startsWith("rediss-cluster://")) {
      return openCluster(settings);
    }
    RedisURI redisUri = parse(settings, uri);
    RedisClient client =
        settings
            .clientResources()
            .map(resources -> RedisClient.create(resources, redisUri))
            .orElseGet(() -> RedisClient.create(redisUri));
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(true)
            // Fail at once while disconnected instead of queueing: a caller's wait is bounded.
            // Load-bearing for replica acknowledgement too: Lettuce then fails the commands in
            // flight when a connection drops rather than re-sending them, and a WAIT re-sent on a
            // new connection (which wrote nothing) would count replicas that lack the grant.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
            .socketOptions(socketOptions(settings))
            .sslOptions(settings.sslOptions().orElseGet(SslOptions::create))
            .build());
    return connect(
        settings,
        client,
        () -> {
          StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
          return new Opened(connection.async(), connection, client.connectPubSub(StringCodec.UTF8));
        },
        false);
  }

  private static RedisConnections openCluster(RedisLockSettings settings) {
    String uri = settings.uri();
    boolean tls = uri.startsWith("rediss-cluster://");
    String rest = uri.substring(uri.indexOf("://") + 3);
    String userInfo = "";
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      userInfo = rest.substring(0, at + 1);
      rest = rest.substring(at + 1);
    }
    int slash = rest.indexOf('/');
    if (slash >= 0) {
      rest = rest.substring(0, slash);
    }
    List<RedisURI> seeds = new ArrayList<>();
    for (String hostPort : rest.split(",")) {
      if (hostPort.isBlank()) {
        continue;
      }
      seeds.add(parse(settings, (tls ? "rediss://" : "redis://") + userInfo + hostPort.trim()));
    }
    if (seeds.isEmpty()) {
      throw new IllegalArgumentException(
          "uri must name at least one cluster node: redis-cluster://host:port[,host:port...]");
    }
    RedisClusterClient client =
        settings
            .clientResources()
            .map(resources -> RedisClusterClient.create(resources, seeds))
            .orElseGet(() -> RedisClusterClient.create(seeds));
    client.setOptions(
        ClusterClientOptions.builder()
            .autoReconnect(true)
            // As for a single node (above): fail in-flight and disconnected commands, never
            // re-send.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
            .socketOptions(socketOptions(settings))
            .sslOptions(settings.sslOptions().orElseGet(SslOptions::create))
            .topologyRefreshOptions(
                ClusterTopologyRefreshOptions.builder()
                    .enableAllAdaptiveRefreshTriggers()
                    .enablePeriodicRefresh(Duration.ofSeconds(30))
                    .build())
            .build());
    return connect(
        settings,
        client,
        () -> {
          StatefulRedisClusterConnection<String, String> connection =
              client.connect(StringCodec.UTF8);
          return new Opened(connection.async(), connection, client.connectPubSub(StringCodec.UTF8));
        },
        true);
  }

  /** What a client opened: the command interface, its connection, and the signal connection. */
  private record Opened(
      RedisClusterAsyncCommands<String, String> commands,
      StatefulConnection<String, String> connection,
      StatefulRedisPubSubConnection<String, String> signals) {}

  private static RedisConnections connect(
      RedisLockSettings settings,
      AbstractRedisClient client,
      java.util.function.Supplier<Opened> open,
      boolean cluster) {
    try {
      Opened opened = open.get();
      return new RedisConnections(
          opened.commands(),
          opened.signals(),
          cluster,
          bound -> closeWithin(bound, opened, client));
    } catch (RuntimeException e) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
      throw unreachable(settings, e);
    }
  }

  private static RedisURI parse(RedisLockSettings settings, String uri) {
    RedisURI redisUri;
    try {
      redisUri = RedisURI.create(uri);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "uri is not a valid Redis URI: '" + settings.redactedUri() + "': " + e.getMessage(), e);
    }
    redisUri.setTimeout(settings.commandTimeout());
    char[] password = settings.password();
    if (password != null) {
      settings.username().ifPresent(redisUri::setUsername);
      redisUri.setPassword(password);
    }
    return redisUri;
  }

  private static SocketOptions socketOptions(RedisLockSettings settings) {
    return SocketOptions.builder()
        .connectTimeout(settings.commandTimeout())
        .keepAlive(true)
        .build();
  }

  private static BackendUnavailableException unreachable(RedisLockSettings settings, Exception e) {
    return new BackendUnavailableException(
        "Cannot connect to Redis at " + settings.redactedUri() + ": " + Failures.describe(e), e);
  }

  /** Closes the connections and the client, waiting at most {@code bound}. */
  Closed close(Duration bound) {
    return closer.apply(bound);
  }

  /**
   * Closes the connections, then the client, waiting at most {@code bound}. Lettuce's own {@code
   * close()} and {@code shutdown()} wait without bound and without heeding interrupts: a cluster
   * connection's close was seen to wait forever in CI after a test stopped a node. A Cluster client
   * first stops refreshing its topology: a refresh under way (adaptive refreshes start when a
   * stopped node's connection keeps failing to reconnect) connects to every node, the stopped one
   * included, and Lettuce does not cancel it at shutdown (lettuce#2904).
   */
  private static Closed closeWithin(Duration bound, Opened opened, AbstractRedisClient client) {
    if (client instanceof RedisClusterClient clusterClient) {
      clusterClient.suspendTopologyRefresh();
    }
    CompletableFuture<?> closed =
        CompletableFuture.allOf(
                opened.signals().closeAsync().exceptionally(e -> null),
                opened.connection().closeAsync().exceptionally(e -> null))
            .thenCompose(v -> client.shutdownAsync(0, 2, TimeUnit.SECONDS));
    try {
      closed.get(bound.toNanos(), TimeUnit.NANOSECONDS);
      return Closed.CLOSED;
    } catch (TimeoutException e) {
      log.warn(
          "The Redis client did not close within {}; it is left to end in the background", bound);
      client.shutdownAsync(0, 2, TimeUnit.SECONDS);
      return Closed.STILL_CLOSING;
    } catch (ExecutionException e) {
      return Closed.CLOSED; // closing broken connections: nothing more to do
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      client.shutdownAsync(0, 2, TimeUnit.SECONDS);
      return Closed.STILL_CLOSING;
    }
  }
}
