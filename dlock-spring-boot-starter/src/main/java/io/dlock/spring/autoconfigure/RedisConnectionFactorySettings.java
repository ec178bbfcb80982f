package io.dlock.spring.autoconfigure;

import io.dlock.redis.RedisLockSettings;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.resource.ClientResources;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
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
 * dlock's Redis settings for the server an application's Spring Data {@link
 * LettuceConnectionFactory} reaches: the same single server, Sentinel-managed primary or Cluster,
 * database, credentials and TLS, on the factory's Lettuce resources (event loops and timers).
 *
 * <p>dlock opens its own two connections rather than borrowing the factory's: a re-sent script is
 * harmless because dlock remembers each request's answer for twice its command timeout plus a
 * second, which holds only with dlock's client options (commands rejected while disconnected, its
 * command timeout); the factory's queue commands while disconnected and send them later.
 *
 * <p>What cannot be followed fails the start-up with a message naming it, rather than locking on
 * some other server: a Unix socket, a static master/replica set, STARTTLS, TLS through Sentinel, a
 * Cluster with a peer verification other than full, separate Sentinel credentials, and credentials
 * from a provider. The factory's TLS options (key and trust material) are dlock's too.
 */
final class RedisConnectionFactorySettings {
  private RedisConnectionFactorySettings() {}

  /** What the settings are made of, apart from the resources: testable without a factory. */
  record Target(String uri, @Nullable String username, char @Nullable [] password) {}

  /**
   * The settings for {@code factory}'s server, with {@code properties} ({@code
   * dlock.backend-properties}) applied.
   *
   * @throws IllegalStateException if the factory's configuration cannot be followed
   */
  static RedisLockSettings of(LettuceConnectionFactory factory, Map<String, String> properties) {
    Target target = target(factory);
    RedisLockSettings settings = RedisLockSettings.of(target.uri());
    if (target.password() != null) {
      settings = settings.withCredentials(target.username(), target.password());
    }
    ClientResources resources = factory.getClientResources();
    if (resources != null) {
      settings = settings.withClientResources(resources);
    }
    // The factory's TLS key and trust material (a Spring Boot SSL bundle puts it there).
    Optional<SslOptions> ssl =
        factory.getClientConfiguration().getClientOptions().map(ClientOptions::getSslOptions);
    if (ssl.isPresent()) {
      settings = settings.withSslOptions(ssl.get());
    }
    return settings.withProperties(properties);
  }

  static Target target(LettuceConnectionFactory factory) {
    LettuceClientConfiguration client = factory.getClientConfiguration();
    if (client.getRedisCredentialsProviderFactory().isPresent()) {
      throw unsupported("takes its credentials from a RedisCredentialsProviderFactory");
    }
    boolean tls = client.isUseSsl();
    if (tls && client.isStartTls()) {
      throw unsupported("uses STARTTLS");
    }
    RedisConfiguration configuration = configuration(factory);
    if (configuration instanceof RedisClusterConfiguration cluster) {
      if (tls && client.getVerifyMode() != SslVerifyMode.FULL) {
        throw unsupported("verifies a Cluster's TLS peers other than fully");
      }
      return new Target(
          (tls ? "rediss-cluster://" : "redis-cluster://") + hostPorts(cluster.getClusterNodes()),
          cluster.getUsername(),
          password(cluster.getPassword()));
    }
    if (configuration instanceof RedisSentinelConfiguration sentinel) {
      if (tls) {
        throw unsupported("uses TLS through Sentinel");
      }
      if (sentinel.getSentinelPassword().isPresent() || sentinel.getSentinelUsername() != null) {
        throw unsupported("has credentials of its own for the Sentinels");
      }
      return new Target(
          "redis-sentinel://"
              + hostPorts(sentinel.getSentinels())
              + "/"
              + sentinel.getDatabase()
              + "#"
              + sentinel.getMaster().getName(),
          sentinel.getUsername(),
          password(sentinel.getPassword()));
    }
    if (configuration instanceof RedisStandaloneConfiguration standalone) {
      String query =
          tls && client.getVerifyMode() != SslVerifyMode.FULL
              ? "?verifyPeer=" + client.getVerifyMode().name()
              : "";
      return new Target(
          (tls ? "rediss://" : "redis://")
              + hostPort(standalone.getHostName(), standalone.getPort())
              + "/"
              + standalone.getDatabase()
              + query,
          standalone.getUsername(),
          password(standalone.getPassword()));
    }
    // A Unix socket, a static master/replica set, or a kind this class does not know.
    throw unsupported("is configured with a " + configuration.getClass().getSimpleName());
  }

  /**
   * The configuration the factory was made with. Spring Data keeps it private and answers the
   * getters of kinds it was not made with from defaults (a static master/replica factory's {@code
   * getStandaloneConfiguration()} is {@code localhost:6379}, database 0, no password), so reading
   * it is the only way not to lock on some other server. Fails closed if it cannot be read.
   */
  private static RedisConfiguration configuration(LettuceConnectionFactory factory) {
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
              + ")");
    }
    return known;
  }

  private static String hostPorts(Iterable<RedisNode> nodes) {
    List<String> all = new ArrayList<>();
    for (RedisNode node : nodes) {
      String host = node.getHost();
      Integer port = node.getPort();
      if (host == null || port == null) {
        throw unsupported("names a node without host or port: " + node);
      }
      all.add(hostPort(host, port));
    }
    if (all.isEmpty()) {
      throw unsupported("names no nodes");
    }
    return all.stream().collect(Collectors.joining(","));
  }

  /** {@code host:port}, with an IPv6 address in brackets as a URI needs it. */
  private static String hostPort(String host, int port) {
    return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
  }

  private static char @Nullable [] password(RedisPassword password) {
    return password.toOptional().orElse(null);
  }

  private static IllegalStateException unsupported(String what) {
    return new IllegalStateException(
        "dlock cannot use the application's LettuceConnectionFactory: it "
            + what
            + ". Set dlock.backend to the lock server's URI (credentials in"
            + " dlock.backend-properties.username and .password), or define a LockClient bean");
  }
}
