package io.dlock.redis;

import io.dlock.LockClients;
import io.dlock.spi.UriParameters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Redlock over independent Redis masters (no replication between them): the servers, the time
 * allowed to each of them per call, and the key prefix. An immutable value.
 */
public final class RedlockSettings {
  private final List<String> uris;
  private final Duration nodeTimeout;
  private final String keyPrefix;

  private RedlockSettings(List<String> uris, Duration nodeTimeout, String keyPrefix) {
    this.uris = uris;
    this.nodeTimeout = nodeTimeout;
    this.keyPrefix = keyPrefix;
  }

  /**
   * Settings for these masters ({@code redis://} or {@code rediss://} URIs), with a 50 ms per-node
   * timeout.
   *
   * @param uris 3 to 15 independent masters; an odd number is best (5 is the usual choice)
   */
  public static RedlockSettings of(List<String> uris) {
    Objects.requireNonNull(uris, "uris");
    if (uris.size() < 3 || uris.size() > 15) {
      throw new IllegalArgumentException(
          "uris must name 3 to 15 independent Redis masters, but named " + uris.size());
    }
    for (String uri : uris) {
      if (!uri.startsWith("redis://") && !uri.startsWith("rediss://")) {
        throw new IllegalArgumentException(
            "each of uris must be redis:// or rediss://, but one was '"
                + LockClients.redact(uri)
                + "'");
      }
    }
    return new RedlockSettings(
        List.copyOf(uris), Duration.ofMillis(50), RedisLockSettings.DEFAULT_KEY_PREFIX);
  }

  /**
   * Parses {@code redlock://host:port,host:port,...[?nodeTimeout=PT0.2S&keyPrefix=app:]} (or {@code
   * redlocks://} for TLS); user and password, if any, apply to every master. The query takes {@code
   * nodeTimeout} (an ISO-8601 duration) and {@code keyPrefix}, each at most once and
   * percent-decoded ({@link UriParameters#parseQuery}).
   *
   * @throws IllegalArgumentException naming the parameter if one is unknown, repeated or invalid
   */
  public static RedlockSettings parse(String uri) {
    Objects.requireNonNull(uri, "uri");
    boolean tls = uri.startsWith("redlocks://");
    if (!tls && !uri.startsWith("redlock://")) {
      throw new IllegalArgumentException(
          "uri must start with redlock:// or redlocks://, but was '"
              + LockClients.redact(uri)
              + "'");
    }
    String rest = uri.substring(uri.indexOf("://") + 3);
    String query = "";
    int question = rest.indexOf('?');
    if (question >= 0) {
      query = rest.substring(question + 1);
      rest = rest.substring(0, question);
    }
    String userInfo = "";
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      userInfo = rest.substring(0, at + 1);
      rest = rest.substring(at + 1);
    }
    List<String> masters = new ArrayList<>();
    for (String hostPort : rest.split(",")) {
      if (!hostPort.isBlank()) {
        masters.add((tls ? "rediss://" : "redis://") + userInfo + hostPort.trim());
      }
    }
    RedlockSettings settings = of(masters);
    Map<String, String> parameters =
        UriParameters.parseQuery(query, "redlock URI", List.of("nodeTimeout", "keyPrefix"));
    String nodeTimeout = parameters.get("nodeTimeout");
    if (nodeTimeout != null) {
      settings = settings.withNodeTimeout(UriParameters.isoDuration("nodeTimeout", nodeTimeout));
    }
    String keyPrefix = parameters.get("keyPrefix");
    if (keyPrefix != null) {
      settings = settings.withKeyPrefix(keyPrefix);
    }
    return settings;
  }

  /**
   * The same settings with this per-node timeout: how long one master may take to answer one call
   * before it counts as failed. Keep it far below the lease (the algorithm's assumption); the
   * default 50 ms suits a data-centre network.
   *
   * @param nodeTimeout from 1 ms to 10 s
   */
  public RedlockSettings withNodeTimeout(Duration nodeTimeout) {
    UriParameters.checkRange(
        "nodeTimeout", nodeTimeout, Duration.ofMillis(1), Duration.ofSeconds(10));
    return new RedlockSettings(uris, nodeTimeout, keyPrefix);
  }

  /** The same settings with this key prefix (see {@link RedisLockSettings#withKeyPrefix}). */
  public RedlockSettings withKeyPrefix(String keyPrefix) {
    RedisLockSettings.of("redis://check").withKeyPrefix(keyPrefix);
    return new RedlockSettings(uris, nodeTimeout, keyPrefix);
  }

  public List<String> uris() {
    return uris;
  }

  public Duration nodeTimeout() {
    return nodeTimeout;
  }

  public String keyPrefix() {
    return keyPrefix;
  }

  /** A majority of the masters: N / 2 + 1. */
  public int quorum() {
    return uris.size() / 2 + 1;
  }
}
