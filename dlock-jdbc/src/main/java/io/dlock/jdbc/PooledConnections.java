package io.dlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.BackendUnavailableException;
import io.dlock.spi.Failures;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections for held locks: from the pool, discarded physically, probed apart from it. Also
 * builds the backend's own pool when it is given a URL rather than an application's data source.
 */
final class PooledConnections implements HeldLocks.Connections {
  // The logger of JdbcLockBackend, whose connections these are: the log lines keep their category.
  private static final Logger log = LoggerFactory.getLogger(JdbcLockBackend.class);

  private final DataSource dataSource;
  private final JdbcLockSettings settings;

  PooledConnections(DataSource dataSource, JdbcLockSettings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
  }

  @Override
  public Connection open() throws SQLException {
    return dataSource.getConnection();
  }

  @Override
  public void discard(Connection c) {
    if (dataSource instanceof HikariDataSource hikari) {
      hikari.evictConnection(c); // closes the physical connection now
      return;
    }
    try {
      c.abort(Runnable::run);
    } catch (SQLException | RuntimeException e) {
      log.debug("abort of a held-lock connection failed: {}", e.toString());
    }
    try {
      c.close();
    } catch (SQLException e) {
      log.debug("close of a held-lock connection failed: {}", e.toString());
    }
  }

  @Override
  public boolean reachable() {
    int seconds = (int) Math.max(1, settings.connectTimeout().toSeconds());
    String url = settings.url();
    try (Connection c =
        url != null
            ? java.sql.DriverManager.getConnection(url, probeProperties(settings))
            : dataSource.getConnection()) {
      return c.isValid(seconds);
    } catch (SQLException e) {
      return false;
    }
  }

  /** Driver properties for a connection outside the pool, bounded like the pool's. */
  private static java.util.Properties probeProperties(JdbcLockSettings settings) {
    java.util.Properties props = new java.util.Properties();
    String user = settings.username();
    char[] password = settings.password();
    if (user != null && password != null) {
      props.setProperty("user", user);
      props.setProperty("password", new String(password));
    }
    long connectMillis = settings.connectTimeout().toMillis();
    String url = String.valueOf(settings.url());
    String seconds = Long.toString(Math.max(1, (connectMillis + 999) / 1000));
    if (url.startsWith("jdbc:postgresql:")) {
      props.setProperty("connectTimeout", seconds);
      props.setProperty("loginTimeout", seconds);
      props.setProperty("tcpKeepAlive", "true");
    } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      props.setProperty("connectTimeout", Long.toString(connectMillis));
    }
    return props;
  }

  /** The backend's own pool, on the settings' URL, named {@code poolName}. */
  static HikariDataSource pool(JdbcLockSettings settings, String poolName) {
    HikariConfig config = new HikariConfig();
    config.setPoolName(poolName);
    config.setJdbcUrl(settings.url());
    String user = settings.username();
    char[] password = settings.password();
    if (user != null && password != null) {
      config.setUsername(user);
      config.setPassword(new String(password));
    }
    long connectMillis = settings.connectTimeout().toMillis();
    // One connection per concurrent call, plus one for PostgreSQL's LISTEN, plus one per held lock
    // in the connection-bound modes.
    config.setMaximumPoolSize(
        settings.maxConcurrentCalls()
            + 1
            + (settings.mode() == JdbcLockMode.LEASE_ROW ? 0 : settings.maxHeldLocks()));
    // Connection-bound modes take a connection per grant (and row mode a second one to record
    // it): keep some ready, so that a grant does not wait for a new connection to open.
    config.setMinimumIdle(
        settings.mode() == JdbcLockMode.LEASE_ROW ? 1 : settings.maxConcurrentCalls() + 1);
    config.setConnectionTimeout(connectMillis);
    config.setValidationTimeout(Math.max(250, Math.min(connectMillis, 5000)));
    // Fail at once when the database cannot be reached at start, instead of retrying in the pool.
    config.setInitializationFailTimeout(1);
    config.setAutoCommit(true);
    String url = String.valueOf(settings.url());
    int connectSeconds = (int) Math.max(1, (connectMillis + 999) / 1000);
    if (url.startsWith("jdbc:postgresql:")) {
      config.addDataSourceProperty("connectTimeout", Integer.toString(connectSeconds));
      config.addDataSourceProperty("loginTimeout", Integer.toString(connectSeconds));
      // The client notices a dead server or network; the server's side is set per grant.
      config.addDataSourceProperty("tcpKeepAlive", "true");
      // A statement timeout is a cancel request on a new connection, which the statement's thread
      // waits for: bounded like every connection the backend opens (pgjdbc's default is 10 s, on
      // top of the network timeout, on a silent network).
      config.addDataSourceProperty("cancelSignalTimeout", Integer.toString(connectSeconds));
    } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      config.addDataSourceProperty("connectTimeout", Long.toString(connectMillis));
    }
    try {
      return new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new BackendUnavailableException(
          "Cannot connect to the lock database at "
              + settings.describeTarget()
              + ": "
              + Failures.describe(e),
          e);
    }
  }
}
