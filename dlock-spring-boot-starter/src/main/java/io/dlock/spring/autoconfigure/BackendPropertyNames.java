package io.dlock.spring.autoconfigure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;

/**
 * The keys each backend reads from {@code dlock.backend-properties}, in the backend's own spelling
 * ({@code keyPrefix}), and the mapping of what a Spring user writes ({@code key-prefix}, {@code
 * key_prefix}, an environment variable's {@code keyprefix}) onto it. The backends ignore keys they
 * do not know (the command line's {@code --config} file shares them), so an unmapped {@code
 * key-prefix} left the Redis keys under {@code dlock:} without a word: a key no backend reads is
 * refused here, naming the closest one.
 *
 * <p>The lists follow the backends' providers ({@code RedisBackendProvider}, {@code
 * JdbcBackendProvider}, {@code ZooKeeperBackendProvider}); a URI of a backend this class does not
 * know (a provider of the application's own) gets its properties as they were written.
 */
final class BackendPropertyNames {
  static final String PROPERTY = "dlock.backend-properties";

  private BackendPropertyNames() {}

  /** A backend and the keys it reads. */
  enum Backend {
    REDIS(
        "Redis",
        List.of("username", "password", "keyPrefix", "commandTimeout"),
        "redis://",
        "rediss://",
        "redis-sentinel://",
        "redis-cluster://",
        "rediss-cluster://"),
    REDLOCK("Redlock", List.of("keyPrefix", "nodeTimeout"), "redlock://", "redlocks://"),
    ZOOKEEPER(
        "ZooKeeper",
        List.of(
            "sessionTimeout",
            "connectionTimeout",
            "acl",
            "username",
            "password",
            "followEnsembleChanges",
            "ownerIdsSharedAcrossClients"),
        "zk://"),
    JDBC(
        "JDBC",
        List.of("username", "password", "mode", "table", "database", "createSchema"),
        "jdbc:postgresql:",
        "jdbc:mariadb:",
        "jdbc:mysql:",
        "jdbc:h2:");

    final String label;
    final List<String> keys;
    final List<String> prefixes;

    Backend(String label, List<String> keys, String... prefixes) {
      this.label = label;
      this.keys = keys;
      this.prefixes = List.of(prefixes);
    }

    /** The backend of {@code uri}, or null if none of these. */
    static @Nullable Backend of(String uri) {
      for (Backend backend : values()) {
        for (String prefix : backend.prefixes) {
          if (uri.regionMatches(true, 0, prefix, 0, prefix.length())) {
            return backend;
          }
        }
      }
      return null;
    }
  }

  /**
   * {@code properties} for the backend of {@code uri}, keys in the backend's spelling; unchanged
   * for a backend this class does not know.
   *
   * @throws IllegalStateException naming a key the backend does not read, or one given twice
   */
  static Map<String, String> forUri(String uri, Map<String, String> properties) {
    Backend backend = Backend.of(uri);
    return backend == null ? properties : forBackend(backend, properties);
  }

  /**
   * {@code properties} with keys in {@code backend}'s spelling.
   *
   * @throws IllegalStateException naming a key the backend does not read, or one given twice
   */
  static Map<String, String> forBackend(Backend backend, Map<String, String> properties) {
    Map<String, String> mapped = new LinkedHashMap<>();
    Map<String, String> writtenAs = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : properties.entrySet()) {
      String given = entry.getKey();
      String key = backendSpelling(backend, given);
      if (key == null) {
        String closest = Spelling.closest(given, backend.keys);
        throw new IllegalStateException(
            PROPERTY
                + "."
                + given
                + " is not read by the "
                + backend.label
                + " backend"
                + (closest == null ? "" : "; did you mean " + springName(closest) + "?")
                + " It reads: "
                + backend.keys.stream()
                    .map(BackendPropertyNames::springName)
                    .collect(Collectors.joining(", ")));
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

  private static @Nullable String backendSpelling(Backend backend, String given) {
    String wanted = Spelling.uniform(given);
    for (String key : backend.keys) {
      if (Spelling.uniform(key).equals(wanted)) {
        return key;
      }
    }
    return null;
  }

  /** {@code key-prefix (keyPrefix)}: how a Spring user writes it, and the backend's name. */
  private static String springName(String key) {
    String dashed = DataObjectPropertyName.toDashedForm(key);
    return dashed.equals(key) ? key : dashed + " (" + key + ")";
  }
}
