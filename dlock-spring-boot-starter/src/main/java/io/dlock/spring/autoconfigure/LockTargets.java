package io.dlock.spring.autoconfigure;

import io.dlock.LockClients;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.env.Environment;

/**
 * Says at start where the application's locks are, whichever way the client was chosen, and warns
 * of a place that makes them useless between processes: a Redis server nobody configured (Spring
 * Data's default, {@code localhost:6379}: each machine locks on its own) or an in-memory database
 * (each process has its own). Found by new users, whose locks worked on one machine and excluded
 * nothing across several.
 */
final class LockTargets {
  private static final Logger log = LoggerFactory.getLogger(LockTargets.class);

  private LockTargets() {}

  /**
   * The application's LettuceConnectionFactory: warns when neither {@code spring.data.redis.host}
   * nor {@code spring.data.redis.url} is set and the server is this machine, Spring Data's default.
   */
  static void lettuce(String redactedUri, Environment environment) {
    log.info(
        "dlock locks on {}, the server of the application's LettuceConnectionFactory", redactedUri);
    boolean configured =
        environment.containsProperty("spring.data.redis.host")
            || environment.containsProperty("spring.data.redis.url");
    if (!configured && isThisMachine(redactedUri)) {
      log.warn(
          "dlock locks on {}, Spring Data Redis's default: spring.data.redis.host (or .url) is not"
              + " set. Every machine that runs the application with a Redis of its own on"
              + " localhost locks on its own, and they exclude nothing from each other; set the"
              + " shared server's address",
          redactedUri);
    }
  }

  /** The application's CuratorFramework. */
  static void curator(String connectString) {
    log.info("dlock locks on ZooKeeper {}, the application's CuratorFramework", connectString);
  }

  /**
   * The application's DataSource: its URL, and a warning when it is in this process's memory.
   *
   * @return how messages name it: its URL without secrets, when known
   */
  static String dataSource(DataSource dataSource) {
    String url = urlOf(dataSource);
    if (url == null) {
      log.info("dlock locks on the application's DataSource");
      return "the application's DataSource";
    }
    log.info("dlock locks on {}, the application's DataSource", LockClients.redact(url));
    if (inMemory(url)) {
      log.warn(
          "dlock locks on {}, a database in this process's memory: every process of the"
              + " application has its own, and their locks exclude nothing from each other; point"
              + " the DataSource (or dlock.backend) at the shared database",
          LockClients.redact(url));
    }
    return LockClients.redact(url);
  }

  static boolean inMemory(String url) {
    String lower = url.toLowerCase(Locale.ROOT);
    return lower.startsWith("jdbc:h2:mem:")
        || lower.startsWith("jdbc:hsqldb:mem:")
        || lower.startsWith("jdbc:derby:memory:");
  }

  static boolean isThisMachine(String uri) {
    String host;
    try {
      host = URI.create(uri).getHost();
    } catch (IllegalArgumentException e) {
      return false;
    }
    return host != null
        && (host.equalsIgnoreCase("localhost") || host.equals("127.0.0.1") || host.equals("::1"));
  }

  private static @Nullable String urlOf(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return c.getMetaData().getURL();
    } catch (SQLException | RuntimeException e) {
      return null; // the client's own start reports an unreachable database, with its cause
    }
  }
}
