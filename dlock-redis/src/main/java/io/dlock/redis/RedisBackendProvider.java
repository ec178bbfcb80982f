package io.dlock.redis;

import io.dlock.LockClientOptions;
import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockBackendProvider;
import io.dlock.spi.UriParameters;
import java.util.List;
import java.util.Map;

/**
 * Makes Redis backends from {@code redis://} and {@code rediss://} URIs for {@link
 * io.dlock.LockClients}. Properties: {@code username}, {@code password}, {@code keyPrefix}, {@code
 * commandTimeout} (an ISO-8601 duration such as {@code PT2S}); for {@code redlock://host:port,...}
 * (and {@code redlocks://}), {@code keyPrefix} and {@code nodeTimeout} (ISO-8601), with the
 * credentials in the URI. A malformed duration fails with {@link IllegalArgumentException} naming
 * the property.
 */
public final class RedisBackendProvider implements LockBackendProvider {

  @Override
  public String schemes() {
    return String.join(", ", RedisLockSettings.SCHEMES) + ", redlock://";
  }

  @Override
  public boolean supports(String uri) {
    return RedisLockSettings.SCHEMES.stream().anyMatch(uri::startsWith) || isRedlock(uri);
  }

  private static final AcceptedProperties REDIS =
      new AcceptedProperties(
          "Redis", List.of("username", "password", "keyPrefix", "commandTimeout"));
  private static final AcceptedProperties REDLOCK =
      new AcceptedProperties(
          "Redlock",
          List.of("keyPrefix", "nodeTimeout"),
          " (Redlock takes its credentials in the URI)");

  @Override
  public AcceptedProperties acceptedProperties(String uri) {
    return isRedlock(uri) ? REDLOCK : REDIS;
  }

  private static boolean isRedlock(String uri) {
    return uri.startsWith("redlock://") || uri.startsWith("redlocks://");
  }

  @Override
  public LockBackend connect(
      String uri, Map<String, String> properties, LockClientOptions options) {
    if (isRedlock(uri)) {
      return connectRedlock(uri, properties);
    }
    RedisLockSettings settings = RedisLockSettings.of(uri).withProperties(properties);
    return RedisLockBackend.connect(settings);
  }

  private static LockBackend connectRedlock(String uri, Map<String, String> properties) {
    RedlockSettings settings = RedlockSettings.parse(uri);
    String prefix = properties.get("keyPrefix");
    if (prefix != null) {
      settings = settings.withKeyPrefix(prefix);
    }
    String timeout = properties.get("nodeTimeout");
    if (timeout != null) {
      settings = settings.withNodeTimeout(UriParameters.isoDuration("nodeTimeout", timeout));
    }
    return RedlockLockBackend.connect(settings);
  }
}
