package io.dlock.spring.autoconfigure;

import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackendProvider;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceLoader;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;

/**
 * {@code dlock.backend-properties} in each backend's own spelling: what a Spring user writes
 * ({@code key-prefix}, {@code key_prefix}, an environment variable's {@code keyprefix}) mapped onto
 * the key the backend reads ({@code keyPrefix}, as its provider's {@link
 * LockBackendProvider#acceptedProperties} says), and a key it does not read refused, naming the
 * closest one. An unmapped {@code key-prefix} left the Redis keys under {@code dlock:} without a
 * word. A URI of a provider that says nothing (one of the application's own) gets its properties as
 * they were written.
 */
final class BackendPropertyNames {
  static final String PROPERTY = "dlock.backend-properties";

  private BackendPropertyNames() {}

  /**
   * {@code properties} for the backend of {@code uri}, keys in the backend's spelling; unchanged
   * for a backend whose provider does not say what it reads (or no provider takes the URI).
   *
   * @throws IllegalStateException naming a key the backend does not read, or one given twice
   */
  static Map<String, String> forUri(String uri, Map<String, String> properties) {
    for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
      if (provider.supports(uri)) {
        AcceptedProperties accepted = provider.acceptedProperties(uri);
        return accepted == null ? properties : forBackend(accepted, properties);
      }
    }
    return properties;
  }

  /**
   * {@code properties} with keys in the spelling of the backend that reads {@code accepted}.
   *
   * @throws IllegalStateException naming a key the backend does not read, or one given twice
   */
  static Map<String, String> forBackend(
      AcceptedProperties accepted, Map<String, String> properties) {
    Map<String, String> mapped = new LinkedHashMap<>();
    Map<String, String> writtenAs = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : properties.entrySet()) {
      String given = entry.getKey();
      String key = accepted.spelledAs(given);
      if (key == null) {
        throw new IllegalStateException(
            accepted.refusal(PROPERTY + "." + given, given, BackendPropertyNames::springName));
      }
      String earlier = writtenAs.putIfAbsent(key, given);
      if (earlier != null) {
        throw new IllegalStateException(
            PROPERTY + "." + earlier + " and " + PROPERTY + "." + given + " are the same setting");
      }
      mapped.put(key, entry.getValue());
    }
    return mapped;
  }

  /**
   * Refuses backend properties where nothing reads them: a client over the application's
   * CuratorFramework or DataSource takes its settings from {@code dlock.zookeeper.*} or {@code
   * dlock.jdbc.*} and the bean.
   *
   * @throws IllegalStateException if {@code properties} is not empty
   */
  static void requireNone(Map<String, String> properties, String client, String instead) {
    if (!properties.isEmpty()) {
      throw new IllegalStateException(
          PROPERTY
              + " ("
              + String.join(", ", properties.keySet())
              + ") is not read by a client built over the application's "
              + client
              + ": use "
              + instead
              + ", or set dlock.backend to the lock server's URI");
    }
  }

  /** {@code key-prefix (keyPrefix)}: how a Spring user writes it, and the backend's name. */
  static String springName(String key) {
    String dashed = DataObjectPropertyName.toDashedForm(key);
    return dashed.equals(key) ? key : dashed + " (" + key + ")";
  }
}
