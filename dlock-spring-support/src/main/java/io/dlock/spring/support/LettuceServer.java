package io.dlock.spring.support;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.resource.ClientResources;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ReflectionUtils;

/**
 * The Redis server an application's Spring Data {@link LettuceConnectionFactory} reaches, as dlock
 * connects to it with connections of its own: the same single server, Sentinel-managed primary or
 * Cluster, database, credentials and TLS (the factory's key and trust material), on the factory's
 * Lettuce resources (event loops and timers). The lock client and the {@code Idempotency-Key}
 * records both read the factory through this class.
 *
 * <p>dlock opens its own connections rather than borrowing the factory's: its clients reject
 * commands while disconnected and bound every call by their own timeout, which their repeat-safety
 * relies on; the factory's queue commands while disconnected and send them later.
 *
 * <p>What cannot be followed is refused ({@link IllegalStateException}, naming it), rather than
 * connecting to some other server: a Unix socket, a static master/replica set, STARTTLS, TLS
 * through Sentinel, a Cluster with a peer verification other than full, separate Sentinel
 * credentials, and credentials from a provider.
 *
 * @param uri {@code redis://host:port/database}, {@code rediss://...[?verifyPeer=CA]}, {@code
 *     redis-sentinel://host:port,.../database#primary}, {@code redis-cluster://host:port,...} or
 *     {@code rediss-cluster://...}; never with credentials
 * @param username the user, if the factory names one
 * @param password the password, if the factory has one
 * @param clientResources the factory's Lettuce resources, if it has them: shared, never to be shut
 *     down by dlock
 * @param sslOptions the factory's TLS options (an SSL bundle's key and trust material), if any
 */
public record LettuceServer(
    String uri,
    @Nullable String username,
    char @Nullable [] password,
    @Nullable ClientResources clientResources,
    @Nullable SslOptions sslOptions) {

  public LettuceServer {
    Objects.requireNonNull(uri, "uri");
  }

  /**
   * Whether the server is a Redis Cluster ({@code redis-cluster://}, {@code rediss-cluster://}).
   */
  public boolean isCluster() {
    return uri.startsWith("redis-cluster://") || uri.startsWith("rediss-cluster://");
  }

  /**
   * The server {@code factory} reaches.
   *
   * @param remedy what to do instead, ending the message of a refusal ({@code Set dlock.backend
   *     ...})
   * @throws IllegalStateException if the factory's configuration cannot be followed, naming what
   *     and {@code remedy}
   */
  public static LettuceServer of(LettuceConnectionFactory factory, String remedy) {
    LettuceServer target = target(factory, remedy);
    ClientResources resources = factory.getClientResources();
    // The factory's TLS key and trust material (a Spring Boot SSL bundle puts it there).
    SslOptions ssl =
        factory
            .getClientConfiguration()
            .getClientOptions()
            .map(ClientOptions::getSslOptions)
            .orElse(null);
    return new LettuceServer(target.uri(), target.username(), target.password(), resources, ssl);
  }

  /** The address and credentials alone: readable without starting the factory. */
  static LettuceServer target(LettuceConnectionFactory factory, String remedy) {
    LettuceClientConfiguration client = factory.getClientConfiguration();
    if (client.getRedisCredentialsProviderFactory().isPresent()) {
      throw unsupported("takes its credentials from a RedisCredentialsProviderFactory", remedy);
    }
    boolean tls = client.isUseSsl();
    if (tls && client.isStartTls()) {
      throw unsupported("uses STARTTLS", remedy);
    }
    RedisConfiguration configuration = configuration(factory, remedy);
    if (configuration instanceof RedisClusterConfiguration cluster) {
      if (tls && client.getVerifyMode() != SslVerifyMode.FULL) {
        throw unsupported("verifies a Cluster's TLS peers other than fully", remedy);
      }
      return new LettuceServer(
          (tls ? "rediss-cluster://" : "redis-cluster://")
              + hostPorts(cluster.getClusterNodes(), remedy),
          cluster.getUsername(),
          password(cluster.getPassword()),
          null,
          null);
    }
    if (configuration instanceof RedisSentinelConfiguration sentinel) {
      if (tls) {
        throw unsupported("uses TLS through Sentinel", remedy);
      }
      if (sentinel.getSentinelPassword().isPresent() || sentinel.getSentinelUsername() != null) {
        throw unsupported("has credentials of its own for the Sentinels", remedy);
      }
      return new LettuceServer(
          "redis-sentinel://"
              + hostPorts(sentinel.getSentinels(), remedy)
              + "/"
              + sentinel.getDatabase()
              + "#"
              + sentinel.getMaster().getName(),
          sentinel.getUsername(),
          password(sentinel.getPassword()),
          null,
          null);
    }
    if (configuration instanceof RedisStandaloneConfiguration standalone) {
      String query =
          tls && client.getVerifyMode() != SslVerifyMode.FULL
              ? "?verifyPeer=" + client.getVerifyMode().name()
              : "";
      return new LettuceServer(
          (tls ? "rediss://" : "redis://")
              + hostPort(standalone.getHostName(), standalone.getPort())
              + "/"
              + standalone.getDatabase()
              + query,
          standalone.getUsername(),
          password(standalone.getPassword()),
          null,
          null);
    }
    // A Unix socket, a static master/replica set, or a kind this class does not know.
    throw unsupported("is configured with a " + configuration.getClass().getSimpleName(), remedy);
  }

  /**
   * The configuration the factory was made with. Spring Data keeps it private and answers the
   * getters of kinds it was not made with from defaults (a static master/replica factory's {@code
   * getStandaloneConfiguration()} is {@code localhost:6379}, database 0, no password), so reading
   * it is the only way not to connect to some other server. Fails closed if it cannot be read.
   */
  private static RedisConfiguration configuration(LettuceConnectionFactory factory, String remedy) {
    Field field = ReflectionUtils.findField(LettuceConnectionFactory.class, "configuration");
    Object configuration = null;
    if (field != null) {
      try {
        ReflectionUtils.makeAccessible(field);
        configuration = ReflectionUtils.getField(field, factory);
      } catch (RuntimeException e) {
        configuration = null; // this Spring Data hides it: refused below
      }
    }
    if (!(configuration instanceof RedisConfiguration known)) {
      throw unsupported(
          "keeps its configuration where this dlock version cannot read it (Spring Data Redis "
              + LettuceConnectionFactory.class.getPackage().getImplementationVersion()
              + ")",
          remedy);
    }
    return known;
  }

  private static String hostPorts(Iterable<RedisNode> nodes, String remedy) {
    List<String> all = new ArrayList<>();
    for (RedisNode node : nodes) {
      String host = node.getHost();
      Integer port = node.getPort();
      if (host == null || port == null) {
        throw unsupported("names a node without host or port: " + node, remedy);
      }
      all.add(hostPort(host, port));
    }
    if (all.isEmpty()) {
      throw unsupported("names no nodes", remedy);
    }
    return String.join(",", all);
  }

  /** {@code host:port}, with an IPv6 address in brackets as a URI needs it. */
  private static String hostPort(String host, int port) {
    return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
  }

  private static char @Nullable [] password(RedisPassword password) {
    return password.toOptional().orElse(null);
  }

  private static IllegalStateException unsupported(String what, String remedy) {
    return new IllegalStateException(
        "dlock cannot use the application's LettuceConnectionFactory: it " + what + ". " + remedy);
  }

  @Override
  public String toString() {
    // The password stays out of logs and messages.
    return "LettuceServer[" + uri + (username == null ? "" : ", user " + username) + "]";
  }
}
