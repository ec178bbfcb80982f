package io.dlock.cli;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * Where the locks live: {@code --backend URI}, else the environment variable {@code DLOCK_BACKEND},
 * else {@code backend=} in the {@code --config} properties file. The file may also hold backend
 * settings that do not belong in a URI or on a command line (a password).
 */
final class BackendOptions {

  @Option(
      names = "--backend",
      paramLabel = "URI",
      description =
          "redis://host:port, rediss://..., redlock://host:port,host:port,...,"
              + " zk://host:port[,host:port]/root, jdbc:postgresql://...,"
              + " jdbc:mariadb://..., jdbc:h2:... (default: $DLOCK_BACKEND, or backend= in --config)")
  @Nullable String backend;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "a properties file: backend=URI and backend settings such as password=")
  @Nullable Path config;

  @Option(
      names = {"-v", "--verbose"},
      description = "show library warnings and stack traces")
  boolean verbose;

  /** The backend URI, or null if none was given anywhere. */
  @Nullable String uriOrNull() {
    if (backend != null) {
      return backend;
    }
    String env = System.getenv("DLOCK_BACKEND");
    if (env != null && !env.isBlank()) {
      return env;
    }
    return fileProperties().get("backend");
  }

  String uri() {
    String uri = uriOrNull();
    if (uri == null) {
      throw new IllegalArgumentException(
          "no backend: give --backend URI, set DLOCK_BACKEND, or put backend=URI in --config FILE");
    }
    return uri;
  }

  Map<String, String> fileProperties() {
    Map<String, String> values = new HashMap<>();
    if (config == null) {
      return values;
    }
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(config)) {
      properties.load(reader);
    } catch (IOException e) {
      throw new IllegalArgumentException("--config: cannot read " + config + ": " + e.getMessage());
    }
    properties.forEach((k, v) -> values.put(k.toString(), v.toString()));
    return values;
  }

  /** Connects: {@link #connector()} and its step at once. */
  LockClient connect() {
    return connector().get();
  }

  /**
   * Reads and checks the backend URI and the {@code --config} file now, before any server is
   * contacted (an unknown key fails here, naming it), and returns the step that connects, which may
   * wait on the server.
   *
   * @throws IllegalArgumentException if there is no backend, the file cannot be read, or it holds a
   *     key the backend does not read
   */
  Supplier<LockClient> connector() {
    return connector(LockClientOptions.defaults());
  }

  /** {@link #connector()}, for a client with these options (a listener of its lock events). */
  Supplier<LockClient> connector(LockClientOptions options) {
    String uri = uri();
    Map<String, String> properties = fileProperties();
    ConfigKeys.check(uri, properties, config);
    return () -> connect(uri, properties, options);
  }

  private static LockClient connect(
      String uri, Map<String, String> properties, LockClientOptions options) {
    try {
      return LockClients.connect(uri, properties, options);
    } catch (IllegalStateException e) {
      if (!uri.startsWith("jdbc:")) {
        throw e;
      }
      String message = String.valueOf(e.getMessage());
      if (message.contains("createSchema is on")) {
        throw new BackendNotSetUpException(message, e); // it says to create them by hand
      }
      // JdbcLockBackend.connect's only IllegalStateException: the database answered, but its lock
      // table (or sequence, or the user's rights on them) is not what dlock needs. Its message
      // says which and names the DDL; the library's fix for a missing table is a Java call, so
      // say the command line's.
      throw new BackendNotSetUpException(
          message
              + ". With createSchema=true in the --config file dlock creates missing tables at"
              + " start (the database user needs the right to create them); or create them"
              + " with the DDL named above (docs/jdbc.md)",
          e);
    }
  }
}
