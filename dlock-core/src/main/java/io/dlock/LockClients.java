package io.dlock;

import io.dlock.core.CoreLockClient;
import io.dlock.core.DeferredLockClient;
import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockBackendProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a {@link LockClient} from a backend URI, with whichever backend modules are on the class
 * path: {@code redis://} and {@code rediss://} (dlock-redis), {@code zk://} (dlock-zookeeper),
 * {@code jdbc:...} (dlock-jdbc). Used by the command line and the Spring starter; applications may
 * use it too, or a backend's own factory.
 *
 * <p>{@link #create} puts a client over a backend made in code (a backend's settings, or a backend
 * of your own implementing {@link LockBackend}): waiting, reentrancy, renewal, timeouts and loss
 * signals are the same as for every built-in backend.
 */
public final class LockClients {
  private static final Logger log = LoggerFactory.getLogger(LockClients.class);

  private LockClients() {}

  /**
   * A client over {@code backend}, made in code; closing the client closes the backend.
   *
   * @throws NullPointerException if {@code backend} or {@code options} is null
   */
  public static LockClient create(LockBackend backend, LockClientOptions options) {
    return CoreLockClient.create(backend, options);
  }

  /** A client for {@code uri} with default options. */
  public static LockClient connect(String uri) {
    return connect(uri, Map.of(), LockClientOptions.defaults());
  }

  /**
   * A client for {@code uri}.
   *
   * @param properties backend settings that do not belong in a URI (for example a password)
   * @throws IllegalArgumentException if no backend module on the class path accepts the URI, the
   *     URI is malformed, or a property is one the backend does not read (named, with the closest
   *     one)
   * @throws BackendUnavailableException if the server cannot be reached
   */
  public static LockClient connect(
      String uri, Map<String, String> properties, LockClientOptions options) {
    LockBackendProvider provider = providerFor(uri, properties);
    log.info("dlock locks on {}", redact(uri)); // which server, said once (a new user asked)
    return CoreLockClient.create(provider.connect(uri, properties, options), options);
  }

  /**
   * A client for {@code uri} that starts even while its server is down, as Spring Data Redis and
   * Curator do: connected at once if the server answers within the options' operation timeout, else
   * connecting in the background (retried with a backoff up to 30 seconds, and at a call). Until it
   * connects, every call that needs the server fails with {@link BackendUnavailableException}
   * within its own bound and nothing is held. A misconfiguration found at once (a malformed URI, an
   * unknown property, a missing lock table) still fails here.
   *
   * @throws IllegalArgumentException as {@link #connect(String, Map, LockClientOptions)}
   */
  public static LockClient connectLater(
      String uri, Map<String, String> properties, LockClientOptions options) {
    LockBackendProvider provider = providerFor(uri, properties);
    log.info("dlock locks on {}", redact(uri));
    AcceptedProperties accepted = provider.acceptedProperties(uri);
    return connectLater(
        accepted == null ? "backend" : accepted.backend().toLowerCase(Locale.ROOT),
        redact(uri),
        () -> CoreLockClient.create(provider.connect(uri, properties, options), options),
        options);
  }

  /**
   * The client {@code connect} makes, made as {@link #connectLater(String, Map, LockClientOptions)}
   * makes one: for a client over an application's own connection (the Spring starter's).
   *
   * @param backendName what {@link LockClient#backendName()} says until it connects
   * @param target the server as messages name it, without secrets
   * @param connect makes the connected client; {@link BackendUnavailableException} means the server
   *     is away (retried), any other exception thrown at once a misconfiguration (thrown)
   */
  public static LockClient connectLater(
      String backendName, String target, Supplier<LockClient> connect, LockClientOptions options) {
    return DeferredLockClient.connect(backendName, target, connect, options);
  }

  /** The provider of {@code uri}, having checked that it reads every key of {@code properties}. */
  private static LockBackendProvider providerFor(String uri, Map<String, String> properties) {
    Objects.requireNonNull(uri, "uri");
    List<String> known = new ArrayList<>();
    for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
      if (provider.supports(uri)) {
        AcceptedProperties accepted = provider.acceptedProperties(uri);
        if (accepted != null) {
          accepted.check(properties.keySet()); // a misspelt key would silently do nothing
        }
        return provider;
      }
      known.add(provider.schemes());
    }
    String module = moduleOf(uri);
    throw new IllegalArgumentException(
        "backend URI '"
            + redact(uri)
            + "' is not supported; "
            + (module != null
                ? "its backend is in io.dlock:"
                    + module
                    + ", which is not on the class path: add it"
                    + " as a dependency"
                    + (known.isEmpty()
                        ? ""
                        : " (on the class path: " + String.join(", ", known) + ")")
                : known.isEmpty()
                    ? "no backend module is on the class path"
                    : "supported: " + String.join(", ", known)));
  }

  /**
   * The module whose backend takes {@code uri}, by its scheme, or null: so that a missing
   * dependency is named rather than the URI called unsupported (found by a new user: {@code zk://}
   * without dlock-zookeeper).
   */
  private static @Nullable String moduleOf(String uri) {
    String lower = uri.toLowerCase(Locale.ROOT);
    if (lower.startsWith("redis") || lower.startsWith("redlock://")) {
      return "dlock-redis";
    }
    if (lower.startsWith("zk://")) {
      return "dlock-zookeeper";
    }
    if (lower.startsWith("jdbc:")) {
      return "dlock-jdbc";
    }
    return null;
  }

  /**
   * The URI (a backend URI, a JDBC URL) with every secret it may carry replaced by {@code ***}, for
   * messages and logs: the password of {@code user:password@}, a lone {@code secret@} (Redis's
   * password-only form; a lone user name is hidden with it), and the value of any parameter whose
   * name ends in {@code password} ({@code password=}, {@code digest.password=}).
   */
  public static String redact(String uri) {
    return uri.replaceAll("://([^:@/]*):[^@/]*@", "://$1:***@")
        .replaceAll("://[^:@/]+@", "://***@")
        .replaceAll("(?i)(password=)[^&;]*", "$1***");
  }
}
