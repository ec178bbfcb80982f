package io.dlock.spring.autoconfigure;

import io.dlock.redis.RedisLockSettings;
import io.dlock.spring.support.LettuceServer;
import io.lettuce.core.SslOptions;
import io.lettuce.core.resource.ClientResources;
import java.util.Map;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * dlock's Redis settings for the server an application's Spring Data {@link
 * LettuceConnectionFactory} reaches ({@link LettuceServer}, shared with the {@code Idempotency-Key}
 * records): the same single server, Sentinel-managed primary or Cluster, database, credentials and
 * TLS, on the factory's Lettuce resources (event loops and timers).
 *
 * <p>dlock opens its own two connections rather than borrowing the factory's: a re-sent script is
 * harmless because dlock remembers each request's answer for twice its command timeout plus a
 * second, which holds only with dlock's client options (commands rejected while disconnected, its
 * command timeout); the factory's queue commands while disconnected and send them later.
 */
final class RedisConnectionFactorySettings {
  /** How to lock elsewhere, ending the message of a factory dlock cannot follow. */
  static final String REMEDY =
      "Set dlock.backend to the lock server's URI (credentials in"
          + " dlock.backend-properties.username and .password), or define a LockClient bean";

  private RedisConnectionFactorySettings() {}

  /**
   * The settings for {@code factory}'s server, with {@code properties} ({@code
   * dlock.backend-properties}) applied.
   *
   * @throws IllegalStateException if the factory's configuration cannot be followed
   */
  static RedisLockSettings of(LettuceConnectionFactory factory, Map<String, String> properties) {
    LettuceServer server = LettuceServer.of(factory, REMEDY);
    RedisLockSettings settings = RedisLockSettings.of(server.uri());
    char[] password = server.password();
    if (password != null) {
      settings = settings.withCredentials(server.username(), password);
    }
    ClientResources resources = server.clientResources();
    if (resources != null) {
      settings = settings.withClientResources(resources);
    }
    SslOptions ssl = server.sslOptions();
    if (ssl != null) {
      settings = settings.withSslOptions(ssl);
    }
    return settings.withProperties(properties);
  }
}
