package io.dlock.redis;

import io.dlock.LockClients;
import io.dlock.spi.UriParameters;
import io.lettuce.core.SslOptions;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How to reach Redis and where to keep the locks. An immutable value.
 *
 * <p>The URI takes Lettuce's forms: {@code redis://[[user]:password@]host[:port][/database]}, and
 * {@code rediss://...} for TLS. Credentials may instead be given with {@link #withCredentials}, for
 * example from a secret store, so that they never appear in a URI or in code.
 */
public final class RedisLockSettings {

  /**
   * The URI schemes: a single server ({@code redis://}, {@code rediss://} with TLS), a primary
   * found through Sentinel ({@code redis-sentinel://host:port[,host:port]#masterName}), and a Redis
   * Cluster ({@code redis-cluster://host:port[,host:port]}, {@code rediss-cluster://}).
   */
  public static final java.util.List<String> SCHEMES =
      java.util.List.of(
          "redis://", "rediss://", "redis-sentinel://", "redis-cluster://", "rediss-cluster://");

  /** The default key prefix. */
  public static final String DEFAULT_KEY_PREFIX = "dlock:";

  private final String uri;
  private final String keyPrefix;
  private final Duration commandTimeout;
  private final @Nullable String username;
  private final char @Nullable [] password;
  private final int replicasToAcknowledge;
  private final Duration replicaTimeout;
  private final @Nullable ClientResources clientResources;
  private final @Nullable SslOptions sslOptions;

  private RedisLockSettings(Copy c) {
    this.uri = c.uri;
    this.keyPrefix = c.keyPrefix;
    this.commandTimeout = c.commandTimeout;
    this.username = c.username;
    this.password = c.password;
    this.replicasToAcknowledge = c.replicasToAcknowledge;
    this.replicaTimeout = c.replicaTimeout;
    this.clientResources = c.clientResources;
    this.sslOptions = c.sslOptions;
  }

  /** The mutable copy every {@code with...} changes one field of before building a new value. */
  private static final class Copy {
    final String uri;
    String keyPrefix = DEFAULT_KEY_PREFIX;
    Duration commandTimeout = Duration.ofSeconds(5);
    @Nullable String username;
    char @Nullable [] password;
    int replicasToAcknowledge;
    Duration replicaTimeout = Duration.ZERO;
    @Nullable ClientResources clientResources;
    @Nullable SslOptions sslOptions;

    Copy(String uri) {
      this.uri = uri;
    }

    Copy(RedisLockSettings s) {
      uri = s.uri;
      keyPrefix = s.keyPrefix;
      commandTimeout = s.commandTimeout;
      username = s.username;
      password = s.password;
      replicasToAcknowledge = s.replicasToAcknowledge;
      replicaTimeout = s.replicaTimeout;
      clientResources = s.clientResources;
      sslOptions = s.sslOptions;
    }
  }

  /**
   * Settings for the server at {@code uri}, with the default key prefix and a 5 s command timeout.
   *
   * @throws IllegalArgumentException if the URI is not {@code redis://} or {@code rediss://}
   */
  public static RedisLockSettings of(String uri) {
    Objects.requireNonNull(uri, "uri");
    if (!SCHEMES.stream().anyMatch(uri::startsWith)) {
      throw new IllegalArgumentException(
          "uri must start with one of "
              + String.join(", ", SCHEMES)
              + ", but was '"
              + LockClients.redact(uri)
              + "'");
    }
    return new RedisLockSettings(new Copy(uri));
  }

  /**
   * The same settings with this key prefix: every lock key, fencing counter and channel starts with
   * it. Must not contain braces, which Redis Cluster reads as hash tags.
   *
   * @param keyPrefix 0 to 64 characters, no braces, no whitespace
   */
  public RedisLockSettings withKeyPrefix(String keyPrefix) {
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    if (keyPrefix.length() > 64 || keyPrefix.matches(".*[{}\\s].*")) {
      throw new IllegalArgumentException(
          "keyPrefix must have 0 to 64 characters without braces or whitespace, but was '"
              + keyPrefix
              + "'");
    }
    Copy c = new Copy(this);
    c.keyPrefix = keyPrefix;
    return new RedisLockSettings(c);
  }

  /**
   * The same settings with this command timeout: the longest Lettuce waits for one reply, and the
   * connect timeout.
   *
   * @param commandTimeout from 10 ms to 5 minutes
   */
  public RedisLockSettings withCommandTimeout(Duration commandTimeout) {
    UriParameters.checkRange(
        "commandTimeout", commandTimeout, Duration.ofMillis(10), Duration.ofMinutes(5));
    Copy c = new Copy(this);
    c.commandTimeout = commandTimeout;
    return new RedisLockSettings(c);
  }

  /**
   * The same settings with these credentials (Redis 6 ACL user, or only a password for {@code
   * requirepass}); they replace any in the URI.
   *
   * @param username the ACL user, or null for the default user
   * @param password the password
   */
  public RedisLockSettings withCredentials(@Nullable String username, char[] password) {
    Objects.requireNonNull(password, "password");
    Copy c = new Copy(this);
    c.username = username;
    c.password = password.clone();
    return new RedisLockSettings(c);
  }

  /**
   * The same settings, but a grant counts only once {@code replicas} replicas acknowledged it
   * (Redis {@code WAIT}) within {@code timeout}; otherwise it is released and the acquisition fails
   * with {@link io.dlock.BackendUnavailableException}. This narrows, but does not close, the window
   * in which a failover to a replica that never received the grant lets a second client acquire:
   * {@code WAIT} does not make replication synchronous, and a replica that acknowledged may still
   * not be the one promoted. {@code WAIT} blocks this client's command connection until the
   * replicas answer or the timeout passes. Not available on Redis Cluster.
   *
   * @param replicas from 1 to 16
   * @param timeout from 1 ms to 10 s
   */
  public RedisLockSettings withReplicaAcknowledgement(int replicas, Duration timeout) {
    UriParameters.checkRange("replicas", replicas, 1, 16);
    UriParameters.checkRange("timeout", timeout, Duration.ofMillis(1), Duration.ofSeconds(10));
    if (isCluster()) {
      throw new IllegalArgumentException(
          "replica acknowledgement (WAIT) is not available on Redis Cluster");
    }
    Copy c = new Copy(this);
    c.replicasToAcknowledge = replicas;
    c.replicaTimeout = timeout;
    return new RedisLockSettings(c);
  }

  /**
   * The same settings, but the client runs on these Lettuce resources (event loops, timers, DNS
   * resolver) instead of its own: an application that already runs Lettuce then starts no second
   * set of threads. dlock still opens its own two connections, with its own client options: it
   * rejects commands while disconnected rather than queueing them, so that no script runs later
   * than its request memory covers. It never shuts the resources down: their owner does, after
   * closing the lock client.
   *
   * @param clientResources resources that stay open while the lock client is
   */
  public RedisLockSettings withClientResources(ClientResources clientResources) {
    Objects.requireNonNull(clientResources, "clientResources");
    Copy c = new Copy(this);
    c.clientResources = clientResources;
    return new RedisLockSettings(c);
  }

  /**
   * The same settings with the backend properties of {@link LockClients#connect} applied: {@code
   * keyPrefix}, {@code commandTimeout} (an ISO-8601 duration such as {@code PT2S}), {@code
   * username} with {@code password}. Others are ignored.
   *
   * @throws IllegalArgumentException naming the property whose value is malformed or out of range
   */
  public RedisLockSettings withProperties(Map<String, String> properties) {
    RedisLockSettings settings = this;
    String prefix = properties.get("keyPrefix");
    if (prefix != null) {
      settings = settings.withKeyPrefix(prefix);
    }
    String timeout = properties.get("commandTimeout");
    if (timeout != null) {
      settings = settings.withCommandTimeout(UriParameters.isoDuration("commandTimeout", timeout));
    }
    String password = properties.get("password");
    if (password != null) {
      settings = settings.withCredentials(properties.get("username"), password.toCharArray());
    }
    return settings;
  }

  /**
   * The same settings with these TLS options (key store, trust store, protocols, ciphers) for a
   * {@code rediss://} URI, for example from a Spring Boot SSL bundle; without them the JDK's
   * defaults apply.
   */
  public RedisLockSettings withSslOptions(SslOptions sslOptions) {
    Objects.requireNonNull(sslOptions, "sslOptions");
    Copy c = new Copy(this);
    c.sslOptions = sslOptions;
    return new RedisLockSettings(c);
  }

  /** The TLS options, if given. */
  Optional<SslOptions> sslOptions() {
    return Optional.ofNullable(sslOptions);
  }

  /** The resources to run on, if shared with the application. */
  Optional<ClientResources> clientResources() {
    return Optional.ofNullable(clientResources);
  }

  private boolean isCluster() {
    return uri.startsWith("redis-cluster://") || uri.startsWith("rediss-cluster://");
  }

  /** How many replicas must acknowledge a grant; 0 when not asked. */
  public int replicasToAcknowledge() {
    return replicasToAcknowledge;
  }

  /** How long to wait for the replicas' acknowledgement. */
  public Duration replicaTimeout() {
    return replicaTimeout;
  }

  public String uri() {
    return uri;
  }

  public String keyPrefix() {
    return keyPrefix;
  }

  public Duration commandTimeout() {
    return commandTimeout;
  }

  Optional<String> username() {
    return Optional.ofNullable(username);
  }

  char @Nullable [] password() {
    return password == null ? null : password.clone();
  }

  /** The URI without its password, for messages and logs. */
  public String redactedUri() {
    return LockClients.redact(uri);
  }

  @Override
  public String toString() {
    return "RedisLockSettings[" + redactedUri() + ", keyPrefix=" + keyPrefix + "]";
  }
}
