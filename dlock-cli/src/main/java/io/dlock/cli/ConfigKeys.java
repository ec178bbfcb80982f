package io.dlock.cli;

import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackendProvider;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The keys a {@code --config} file may hold: {@code backend}, and what the backend of the URI reads
 * ({@link LockBackendProvider#acceptedProperties}). A misspelt {@code createschema=true} would
 * otherwise do nothing: the command refuses any other key before it connects, naming the file, the
 * key and the known key closest to it.
 */
final class ConfigKeys {
  /** Every file may name the backend itself. */
  private static final String BACKEND = "backend";

  private ConfigKeys() {}

  /**
   * Refuses a key of {@code properties} that the backend of {@code uri} does not read. A URI no
   * provider on the class path takes is left to {@link io.dlock.LockClients#connect}, which names
   * the module to add.
   *
   * @throws IllegalArgumentException naming the file, the key, the closest known key and all of
   *     them
   */
  static void check(String uri, Map<String, String> properties, @Nullable Path file) {
    AcceptedProperties accepted = acceptedFor(uri);
    if (accepted == null) {
      return;
    }
    TreeSet<String> known = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    known.add(BACKEND);
    known.addAll(accepted.names());
    for (String key : new TreeSet<>(properties.keySet())) {
      if (!accepted.names().contains(key) && !key.equals(BACKEND)) {
        String closest = AcceptedProperties.closest(key, known);
        throw new IllegalArgumentException(
            "--config "
                + file
                + ": unknown key '"
                + key
                + "' for a "
                + accepted.backend()
                + " backend"
                + (closest == null ? "" : "; did you mean '" + closest + "'?")
                + " Known keys: "
                + String.join(", ", known)
                + accepted.note());
      }
    }
  }

  private static @Nullable AcceptedProperties acceptedFor(String uri) {
    for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
      if (provider.supports(uri)) {
        return provider.acceptedProperties(uri);
      }
    }
    return null;
  }
}
