package io.dlock.zookeeper;

import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockBackendProvider;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Makes ZooKeeper backends from {@code zk://host:port[,host:port...][/root/path]} URIs for {@link
 * io.dlock.LockClients}. The path is the root under which the locks live ({@value
 * ZooKeeperLockSettings#DEFAULT_ROOT_PATH} when absent); a port may be left out (2181), and an IPv6
 * host is written in brackets ({@code [::1]:2181}).
 *
 * <p>Properties, never part of the URI: {@code sessionTimeout} and {@code connectionTimeout}
 * (ISO-8601 such as {@code PT10S}, or milliseconds), {@code ownerIdsSharedAcrossClients} and {@code
 * followEnsembleChanges} ({@code true} or {@code false}, the default), {@code acl} ({@code open},
 * {@code digest} or {@code sasl}), {@code username} and {@code password} (the same keys as every
 * backend's; given without {@code acl}, they mean {@code acl=digest}). Other keys are refused.
 *
 * <p>The backend connects before {@link #connect} returns, as {@link
 * ZooKeeperLockBackend#connect(ZooKeeperLockSettings)} does: it fails with {@link
 * io.dlock.BackendUnavailableException} if no member answers within the connection timeout. A
 * malformed URI or property fails with {@link IllegalArgumentException} naming the problem.
 */
public final class ZooKeeperBackendProvider implements LockBackendProvider {
  private static final String SCHEME = "zk://";

  @Override
  public String schemes() {
    return SCHEME;
  }

  @Override
  public boolean supports(String uri) {
    return uri.regionMatches(true, 0, SCHEME, 0, SCHEME.length());
  }

  private static final AcceptedProperties ACCEPTED =
      new AcceptedProperties(
          "ZooKeeper",
          List.of(
              "sessionTimeout",
              "connectionTimeout",
              "acl",
              "username",
              "password",
              "followEnsembleChanges",
              "ownerIdsSharedAcrossClients"));

  @Override
  public AcceptedProperties acceptedProperties(String uri) {
    return ACCEPTED;
  }

  @Override
  public LockBackend connect(
      String uri, Map<String, String> properties, LockClientOptions options) {
    return ZooKeeperLockBackend.connect(settings(uri, properties));
  }

  /**
   * The settings a URI and properties describe.
   *
   * @throws IllegalArgumentException naming the problem if the URI or a property is malformed
   */
  static ZooKeeperLockSettings settings(String uri, Map<String, String> properties) {
    if (!uri.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
      throw new IllegalArgumentException(
          "a ZooKeeper URI starts with zk://, but was '" + LockClients.redact(uri) + "'");
    }
    String rest = uri.substring(SCHEME.length());
    if (rest.contains("?") || rest.contains("#")) {
      throw new IllegalArgumentException(
          "a ZooKeeper URI has no query or fragment (settings go in properties): '"
              + LockClients.redact(uri)
              + "'");
    }
    if (rest.contains("@")) {
      throw new IllegalArgumentException(
          "a ZooKeeper URI holds no credentials; give username and password as properties: '"
              + LockClients.redact(uri)
              + "'");
    }
    int slash = rest.indexOf('/');
    String hosts = slash < 0 ? rest : rest.substring(0, slash);
    String path = slash < 0 ? "" : rest.substring(slash);
    String connectString = connectString(hosts, uri);
    String root =
        path.isEmpty() || path.equals("/") ? ZooKeeperLockSettings.DEFAULT_ROOT_PATH : path;
    Properties settings = new Properties();
    settings.setProperty("connectString", connectString);
    settings.setProperty("rootPath", root);
    for (String key : ACCEPTED.names()) {
      String value = properties.get(key);
      if (value != null) {
        settings.setProperty(key, value);
      }
    }
    try {
      return ZooKeeperLockSettings.fromProperties(settings, "");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "ZooKeeper URI '" + LockClients.redact(uri) + "': " + e.getMessage(), e);
    }
  }

  /** {@code host:port[,host:port...]} checked member by member, ports defaulting to 2181. */
  private static String connectString(String hosts, String uri) {
    if (hosts.isEmpty()) {
      throw new IllegalArgumentException(
          "a ZooKeeper URI names at least one host:port after zk://, but was '"
              + LockClients.redact(uri)
              + "'");
    }
    StringBuilder out = new StringBuilder(hosts.length() + 8);
    for (String member : hosts.split(",", -1)) {
      String host;
      String port;
      if (member.startsWith("[")) {
        int close = member.indexOf(']');
        if (close < 0) {
          throw new IllegalArgumentException(
              "unclosed '[' in ZooKeeper host '"
                  + member
                  + "' of '"
                  + LockClients.redact(uri)
                  + "'");
        }
        host = member.substring(0, close + 1);
        String after = member.substring(close + 1);
        if (!after.isEmpty() && !after.startsWith(":")) {
          throw new IllegalArgumentException(
              "expected ':port' after '" + host + "' in '" + LockClients.redact(uri) + "'");
        }
        port = after.isEmpty() ? "" : after.substring(1);
      } else {
        int colon = member.indexOf(':');
        host = colon < 0 ? member : member.substring(0, colon);
        port = colon < 0 ? "" : member.substring(colon + 1);
      }
      boolean hostValid =
          host.startsWith("[")
              ? host.length() > 2 && host.substring(1, host.length() - 1).matches("[0-9A-Fa-f:.%]+")
              : host.matches("[A-Za-z0-9._-]+");
      if (!hostValid) {
        throw new IllegalArgumentException(
            "invalid ZooKeeper host '"
                + (member.isEmpty() ? "(empty)" : member)
                + "' in '"
                + LockClients.redact(uri)
                + "': expected host:port[,host:port...]");
      }
      int portNumber;
      try {
        portNumber = port.isEmpty() ? 2181 : Integer.parseInt(port);
      } catch (NumberFormatException e) {
        portNumber = -1;
      }
      if (portNumber < 1 || portNumber > 65535) {
        throw new IllegalArgumentException(
            "invalid port '"
                + port
                + "' for ZooKeeper host "
                + host
                + " in '"
                + LockClients.redact(uri)
                + "'");
      }
      if (out.length() > 0) {
        out.append(',');
      }
      out.append(host.toLowerCase(Locale.ROOT)).append(':').append(portNumber);
    }
    return out.toString();
  }
}
