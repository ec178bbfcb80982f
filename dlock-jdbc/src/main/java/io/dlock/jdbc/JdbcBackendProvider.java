package io.dlock.jdbc;

import io.dlock.LockClientOptions;
import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockBackendProvider;
import io.dlock.spi.UriParameters;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Makes JDBC backends from {@code jdbc:postgresql:}, {@code jdbc:mariadb:}, {@code jdbc:mysql:} and
 * {@code jdbc:h2:} URLs for {@link io.dlock.LockClients}; the backend pools its own connections.
 * Properties: {@code username} and {@code password} (replacing any in the URL), {@code mode}
 * ({@code lease-row}, the default, {@code session} or {@code row}), {@code table}, {@code
 * createSchema} ({@code true} or {@code false}), {@code database} ({@code mysql} to run the MySQL
 * statements on MariaDB; by default read from the connection).
 */
public final class JdbcBackendProvider implements LockBackendProvider {
  private static final String[] PREFIXES = {
    "jdbc:postgresql:", "jdbc:mariadb:", "jdbc:mysql:", "jdbc:h2:"
  };

  @Override
  public String schemes() {
    return String.join(", ", PREFIXES);
  }

  @Override
  public boolean supports(String uri) {
    for (String prefix : PREFIXES) {
      if (uri.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  private static final AcceptedProperties ACCEPTED =
      new AcceptedProperties(
          "JDBC", List.of("username", "password", "mode", "table", "createSchema", "database"));

  @Override
  public AcceptedProperties acceptedProperties(String uri) {
    return ACCEPTED;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if {@code mode}, {@code table}, {@code database} or {@code
   *     createSchema} is not one of the allowed values, naming the property and what it allows
   */
  @Override
  public LockBackend connect(
      String uri, Map<String, String> properties, LockClientOptions options) {
    JdbcLockSettings settings = JdbcLockSettings.of(uri);
    String mode = properties.get("mode");
    if (mode != null) {
      settings = settings.withMode(mode(mode));
    }
    String table = properties.get("table");
    if (table != null) {
      settings = settings.withTable(table);
    }
    String database = properties.get("database");
    if (database != null) {
      settings = settings.withDatabase(JdbcDatabase.of(database));
    }
    String createSchema = properties.get("createSchema");
    if (createSchema != null) {
      settings = settings.withCreateSchema(UriParameters.flag("createSchema", createSchema));
    }
    String user = properties.get("username");
    String password = properties.get("password");
    if (password != null) {
      if (user == null) {
        user = urlUser(uri);
      }
      if (user == null) {
        throw new IllegalArgumentException(
            "username must be given (as a property, or user= in the URL) when password is");
      }
      settings = settings.withCredentials(user, password.toCharArray());
    } else if (user != null) {
      settings = settings.withCredentials(user, new char[0]);
    }
    return JdbcLockBackend.connect(settings);
  }

  private static @Nullable String urlUser(String uri) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("[?&;]user=([^&;]*)").matcher(uri);
    return m.find() ? m.group(1) : null;
  }

  static JdbcLockMode mode(String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "lease-row", "lease_row" -> JdbcLockMode.LEASE_ROW;
      case "session" -> JdbcLockMode.SESSION;
      case "row" -> JdbcLockMode.ROW;
      default ->
          throw new IllegalArgumentException(
              "mode must be one of lease-row, session, row, but was '" + value + "'");
    };
  }
}
