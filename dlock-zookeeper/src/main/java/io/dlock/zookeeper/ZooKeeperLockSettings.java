package io.dlock.zookeeper;

import io.dlock.spi.UriParameters;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * How to reach a ZooKeeper ensemble and where to keep the locks. An immutable value; every {@code
 * with...} method validates its argument and returns a new value.
 *
 * <p>Credentials are never part of the connect string. Give them with {@link #withDigestAcl} (for
 * example from a secret store) or in a properties file read by {@link #fromProperties}; SASL
 * (Kerberos) is configured outside the code, by the JAAS file the ZooKeeper client reads ({@code
 * java.security.auth.login.config}), and {@link #withSaslAcl()} only makes the lock nodes private
 * to the authenticated principal.
 */
public final class ZooKeeperLockSettings {

  /** The default root path under which every lock's queue lives. */
  public static final String DEFAULT_ROOT_PATH = "/dlock";

  /** Who may touch the lock nodes. */
  public enum AclMode {
    /** Anyone who can reach the ensemble ({@code world:anyone}); the ZooKeeper default. */
    OPEN,
    /** Only clients authenticated with the same digest user and password. */
    DIGEST,
    /** Only the SASL principal the client authenticated as (configured through JAAS). */
    SASL
  }

  private final String connectString;
  private final String rootPath;
  private final Duration sessionTimeout;
  private final Duration connectionTimeout;
  private final AclMode aclMode;
  private final @Nullable String digestUser;
  private final char @Nullable [] digestPassword;
  private final boolean followEnsembleChanges;
  private final boolean shareOwnerIdsAcrossClients;

  private ZooKeeperLockSettings(
      String connectString,
      String rootPath,
      Duration sessionTimeout,
      Duration connectionTimeout,
      AclMode aclMode,
      @Nullable String digestUser,
      char @Nullable [] digestPassword,
      boolean followEnsembleChanges,
      boolean shareOwnerIdsAcrossClients) {
    this.followEnsembleChanges = followEnsembleChanges;
    this.shareOwnerIdsAcrossClients = shareOwnerIdsAcrossClients;
    this.connectString = connectString;
    this.rootPath = rootPath;
    this.sessionTimeout = sessionTimeout;
    this.connectionTimeout = connectionTimeout;
    this.aclMode = aclMode;
    this.digestUser = digestUser;
    this.digestPassword = digestPassword;
  }

  /**
   * Settings for the ensemble at {@code connectString} ({@code host:port[,host:port...]}, an
   * optional chroot suffix allowed), with root {@value #DEFAULT_ROOT_PATH}, a 30 s session timeout,
   * a 5 s connection timeout and open ACLs.
   *
   * @throws IllegalArgumentException if the connect string is empty or holds whitespace
   */
  public static ZooKeeperLockSettings of(String connectString) {
    Objects.requireNonNull(connectString, "connectString");
    if (connectString.isBlank() || connectString.matches(".*\\s.*")) {
      throw new IllegalArgumentException(
          "connectString must be host:port[,host:port...] without whitespace, but was '"
              + connectString
              + "'");
    }
    return new ZooKeeperLockSettings(
        connectString,
        DEFAULT_ROOT_PATH,
        Duration.ofSeconds(30),
        Duration.ofSeconds(5),
        AclMode.OPEN,
        null,
        null,
        false,
        false);
  }

  /**
   * Reads settings from properties, so that credentials live in configuration, not in code. Keys,
   * after {@code prefix}: {@code connectString} (required), {@code rootPath}, {@code
   * sessionTimeout} and {@code connectionTimeout} (ISO-8601 such as {@code PT10S}, or
   * milliseconds), {@code acl} ({@code open}, {@code digest} or {@code sasl}; {@code digest} when
   * credentials are given without it), {@code username} and {@code password} (the digest
   * credentials: the same keys as every backend's), {@code followEnsembleChanges} and {@code
   * ownerIdsSharedAcrossClients} ({@code true} or {@code false}).
   *
   * @throws IllegalArgumentException naming the key if a value is missing or invalid
   */
  public static ZooKeeperLockSettings fromProperties(Properties properties, String prefix) {
    Objects.requireNonNull(properties, "properties");
    Objects.requireNonNull(prefix, "prefix");
    String connect = properties.getProperty(prefix + "connectString");
    if (connect == null) {
      throw new IllegalArgumentException(prefix + "connectString is required");
    }
    ZooKeeperLockSettings settings = of(connect);
    String root = properties.getProperty(prefix + "rootPath");
    if (root != null) {
      settings = settings.withRootPath(root);
    }
    String session = properties.getProperty(prefix + "sessionTimeout");
    if (session != null) {
      settings =
          settings.withSessionTimeout(
              UriParameters.durationOrMillis(prefix + "sessionTimeout", session));
    }
    String connection = properties.getProperty(prefix + "connectionTimeout");
    if (connection != null) {
      settings =
          settings.withConnectionTimeout(
              UriParameters.durationOrMillis(prefix + "connectionTimeout", connection));
    }
    Boolean follow = flag(properties, prefix + "followEnsembleChanges");
    if (follow != null) {
      settings = settings.withFollowEnsembleChanges(follow);
    }
    Boolean share = flag(properties, prefix + "ownerIdsSharedAcrossClients");
    if (share != null) {
      settings = settings.withOwnerIdsSharedAcrossClients(share);
    }
    String user = properties.getProperty(prefix + "username");
    String password = properties.getProperty(prefix + "password");
    String acl =
        properties
            .getProperty(prefix + "acl", user == null && password == null ? "open" : "digest")
            .trim()
            .toLowerCase(Locale.ROOT);
    switch (acl) {
      case "open":
        return settings;
      case "sasl":
        return settings.withSaslAcl();
      case "digest":
        if (user == null || password == null) {
          throw new IllegalArgumentException(
              prefix + "acl=digest needs " + prefix + "username and " + prefix + "password");
        }
        return settings.withDigestAcl(user, password.toCharArray());
      default:
        throw new IllegalArgumentException(
            prefix + "acl must be open, digest or sasl, but was '" + acl + "'");
    }
  }

  /**
   * The same settings with this root path: every lock's queue node is a child of it.
   *
   * @param rootPath an absolute ZooKeeper path of 2 to 256 characters, without a trailing slash,
   *     empty segments, "." or ".." segments
   */
  public ZooKeeperLockSettings withRootPath(String rootPath) {
    return new ZooKeeperLockSettings(
        connectString,
        requireValidRootPath(rootPath),
        sessionTimeout,
        connectionTimeout,
        aclMode,
        digestUser,
        digestPassword,
        followEnsembleChanges,
        shareOwnerIdsAcrossClients);
  }

  static String requireValidRootPath(String rootPath) {
    Objects.requireNonNull(rootPath, "rootPath");
    boolean valid =
        rootPath.length() >= 2
            && rootPath.length() <= 256
            && rootPath.startsWith("/")
            && !rootPath.endsWith("/")
            && !rootPath.contains("//")
            && !rootPath.matches(".*[\\s\\p{Cntrl}].*")
            && Arrays.stream(rootPath.substring(1).split("/"))
                .noneMatch(s -> s.equals(".") || s.equals(".."));
    if (!valid) {
      throw new IllegalArgumentException(
          "rootPath must be an absolute path of 2 to 256 characters such as /dlock, without a"
              + " trailing slash, empty, '.' or '..' segments or whitespace, but was '"
              + rootPath
              + "'");
    }
    return rootPath;
  }

  /**
   * The same settings with this session timeout: how long the ensemble keeps a silent client's
   * session (and its lock nodes) alive. The server clamps it to its own bounds (by default 2 to 20
   * ticks).
   *
   * @param sessionTimeout from 100 ms to 10 minutes
   */
  public ZooKeeperLockSettings withSessionTimeout(Duration sessionTimeout) {
    UriParameters.checkRange(
        "sessionTimeout", sessionTimeout, Duration.ofMillis(100), Duration.ofMinutes(10));
    return new ZooKeeperLockSettings(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        aclMode,
        digestUser,
        digestPassword,
        followEnsembleChanges,
        shareOwnerIdsAcrossClients);
  }

  /**
   * The same settings with this connection timeout: the longest start-up waits for a first
   * connection, and the longest one operation waits for a lost connection to come back.
   *
   * @param connectionTimeout from 10 ms to 10 minutes
   */
  public ZooKeeperLockSettings withConnectionTimeout(Duration connectionTimeout) {
    UriParameters.checkRange(
        "connectionTimeout", connectionTimeout, Duration.ofMillis(10), Duration.ofMinutes(10));
    return new ZooKeeperLockSettings(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        aclMode,
        digestUser,
        digestPassword,
        followEnsembleChanges,
        shareOwnerIdsAcrossClients);
  }

  /**
   * The same settings with lock nodes readable and writable only by clients authenticated with this
   * digest user and password (ACL {@code auth} / creator-all). All clients of one deployment must
   * use the same credentials. The password array is copied.
   *
   * @param user 1 to 256 characters, no colon
   * @param password 1 to 1024 characters
   */
  public ZooKeeperLockSettings withDigestAcl(String user, char[] password) {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
    if (user.isEmpty() || user.length() > 256 || user.contains(":")) {
      throw new IllegalArgumentException(
          "user must have 1 to 256 characters and no colon, but has " + user.length());
    }
    if (password.length == 0 || password.length > 1024) {
      throw new IllegalArgumentException(
          "password must have 1 to 1024 characters, but has " + password.length);
    }
    return new ZooKeeperLockSettings(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        AclMode.DIGEST,
        user,
        password.clone(),
        followEnsembleChanges,
        shareOwnerIdsAcrossClients);
  }

  /**
   * The same settings with lock nodes private to the SASL principal the client authenticated as.
   * SASL itself is configured by the JAAS file ({@code Client} section) the ZooKeeper client reads.
   */
  public ZooKeeperLockSettings withSaslAcl() {
    return new ZooKeeperLockSettings(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        AclMode.SASL,
        null,
        null,
        followEnsembleChanges,
        shareOwnerIdsAcrossClients);
  }

  /**
   * The same settings, following (or not) the ensemble's own list of members. By default the client
   * connects only to the members of the connect string, as given: through a load balancer, a proxy
   * or names that resolve differently inside and outside a network, the addresses the members
   * advertise may not be reachable. With {@code true}, Curator's ensemble tracker replaces the
   * connect string with the members' configuration whenever it changes (ZooKeeper's dynamic
   * reconfiguration).
   */
  public ZooKeeperLockSettings withFollowEnsembleChanges(boolean follow) {
    return new ZooKeeperLockSettings(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        aclMode,
        digestUser,
        digestPassword,
        follow,
        shareOwnerIdsAcrossClients);
  }

  /**
   * The same settings, sharing (or not) an owner id's grant across clients. By default an owner id
   * re-enters its grant within one client only, and another client with the same owner id waits
   * like a stranger: every grant is a queue node of one session, and nothing else can end it.
   *
   * <p>With {@code true}, a client joins the hold count on the node of another client's session (as
   * Redis and lease rows share an owner id across processes). That node lives in its creator's
   * session: when that session ends, the joined holders are told by a watch at the moment the node
   * is deleted, which is the same moment the next waiter is notified, so for a round trip or so a
   * joined holder may still act while the next holder is granted. Pass the fencing token to the
   * resource if you enable this (docs/zookeeper.md).
   */
  public ZooKeeperLockSettings withOwnerIdsSharedAcrossClients(boolean share) {
    return new ZooKeeperLockSettings(
        connectString,
        rootPath,
        sessionTimeout,
        connectionTimeout,
        aclMode,
        digestUser,
        digestPassword,
        followEnsembleChanges,
        share);
  }

  /**
   * Whether an owner id's grant is shared across clients; see {@link
   * #withOwnerIdsSharedAcrossClients}.
   */
  public boolean ownerIdsSharedAcrossClients() {
    return shareOwnerIdsAcrossClients;
  }

  /** A true/false property, or null when absent; anything else is refused, naming the key. */
  private static @Nullable Boolean flag(Properties properties, String key) {
    String value = properties.getProperty(key);
    return value == null ? null : UriParameters.flag(key, value);
  }

  public String connectString() {
    return connectString;
  }

  public String rootPath() {
    return rootPath;
  }

  public Duration sessionTimeout() {
    return sessionTimeout;
  }

  public Duration connectionTimeout() {
    return connectionTimeout;
  }

  public AclMode aclMode() {
    return aclMode;
  }

  /**
   * Whether the client follows the ensemble's own member list; see {@link
   * #withFollowEnsembleChanges}.
   */
  public boolean followEnsembleChanges() {
    return followEnsembleChanges;
  }

  @Nullable String digestUser() {
    return digestUser;
  }

  char @Nullable [] digestPassword() {
    return digestPassword == null ? null : digestPassword.clone();
  }

  @Override
  public String toString() {
    return "ZooKeeperLockSettings{connectString="
        + connectString
        + ", rootPath="
        + rootPath
        + ", sessionTimeout="
        + sessionTimeout
        + ", connectionTimeout="
        + connectionTimeout
        + ", acl="
        + aclMode
        + (digestUser == null ? "" : ", user=" + digestUser)
        + (followEnsembleChanges ? ", followEnsembleChanges" : "")
        + (shareOwnerIdsAcrossClients ? ", ownerIdsSharedAcrossClients" : "")
        + "}";
  }
}
