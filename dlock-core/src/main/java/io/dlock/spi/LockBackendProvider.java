package io.dlock.spi;

import io.dlock.LockClientOptions;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Creates backends from a URI, found with {@link java.util.ServiceLoader}: each backend module
 * registers one in {@code META-INF/services/io.dlock.spi.LockBackendProvider}. This is how the
 * command line and the Spring starter turn {@code redis://...}, {@code zk://...} or {@code
 * jdbc:...} into a backend without depending on every backend module.
 */
public interface LockBackendProvider {

  /** The URI forms this provider accepts, for error messages: {@code redis://, rediss://}. */
  String schemes();

  /** Whether this provider handles {@code uri}. */
  boolean supports(String uri);

  /**
   * The properties {@link #connect} reads for {@code uri}, which it supports; null if this provider
   * does not say (then nothing is checked). A key not among them is refused before connecting
   * ({@link io.dlock.LockClients#connect}, the command line, the Spring starter).
   */
  default @Nullable AcceptedProperties acceptedProperties(String uri) {
    return null;
  }

  /**
   * Connects a backend.
   *
   * @param uri the backend URI; credentials may also come from {@code properties}
   * @param properties extra settings (for example {@code password}, {@code keyPrefix}), among
   *     {@link #acceptedProperties} where the provider says them
   * @param options the client options the backend will be used with
   * @throws IllegalArgumentException if the URI or a property is malformed
   * @throws io.dlock.BackendUnavailableException if the server cannot be reached
   */
  LockBackend connect(String uri, Map<String, String> properties, LockClientOptions options);
}
