package io.dlock.jdbc;

import io.dlock.LockClients;
import io.dlock.spi.UriParameters;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Where and how a JDBC lock client keeps its locks. An immutable value; every {@code with...}
 * returns a copy and rejects bad input with an {@link IllegalArgumentException} that names the
 * parameter and the allowed range.
 *
 * <p>Either a {@link DataSource} of the application ({@link #of(DataSource)}; it should be a pool,
 * the backend takes a connection per call and returns it at once) or a JDBC URL ({@link
 * #of(String)}; the backend then pools its own connections with HikariCP and closes them with the
 * client). Credentials may be given apart from the URL with {@link #withCredentials}, for example
 * from a secret store.
 */
public final class JdbcLockSettings {

  /** The default table name. */
  public static final String DEFAULT_TABLE = "dlock_locks";

  /** The longest table name: the sequence ({@code _fence}) and channel names derive from it. */
  public static final int MAX_TABLE_LENGTH = 48;

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private final @Nullable DataSource dataSource;
  private final @Nullable String url;
  private final @Nullable String username;
  private final char @Nullable [] password;
  private final JdbcLockMode mode;
  private final String table;
  private final boolean createSchema;
  private final Duration statementTimeout;
  private final Duration connectTimeout;
  private final int maxConcurrentCalls;
  private final int maxHeldLocks;
  private final Duration heartbeatInterval;
  private final @Nullable JdbcDatabase database;

  private JdbcLockSettings(Copy c) {
    this.dataSource = c.dataSource;
    this.url = c.url;
    this.username = c.username;
    this.password = c.password;
    this.mode = c.mode;
    this.table = c.table;
    this.createSchema = c.createSchema;
    this.statementTimeout = c.statementTimeout;
    this.connectTimeout = c.connectTimeout;
    this.maxConcurrentCalls = c.maxConcurrentCalls;
    this.maxHeldLocks = c.maxHeldLocks;
    this.heartbeatInterval = c.heartbeatInterval;
    this.database = c.database;
  }

  /** The mutable copy every {@code with...} changes one field of before building a new value. */
  private static final class Copy {
    @Nullable DataSource dataSource;
    @Nullable String url;
    @Nullable String username;
    char @Nullable [] password;
    JdbcLockMode mode = JdbcLockMode.LEASE_ROW;
    String table = DEFAULT_TABLE;
    boolean createSchema;
    Duration statementTimeout = Duration.ofSeconds(5);
    Duration connectTimeout = Duration.ofSeconds(5);
    int maxConcurrentCalls = 4;
    int maxHeldLocks = 16;
    Duration heartbeatInterval = Duration.ofSeconds(1);
    @Nullable JdbcDatabase database;

    Copy() {}

    Copy(JdbcLockSettings s) {
      dataSource = s.dataSource;
      url = s.url;
      username = s.username;
      password = s.password;
      mode = s.mode;
      table = s.table;
      createSchema = s.createSchema;
      statementTimeout = s.statementTimeout;
      connectTimeout = s.connectTimeout;
      maxConcurrentCalls = s.maxConcurrentCalls;
      maxHeldLocks = s.maxHeldLocks;
      heartbeatInterval = s.heartbeatInterval;
      database = s.database;
    }
  }

  /**
   * Settings over the application's data source: lease rows in {@value #DEFAULT_TABLE}, no schema
   * creation, 5 s statement and connect timeouts, at most 4 concurrent database calls; in the
   * connection-bound modes at most 16 held locks and a 1 s heartbeat.
   */
  public static JdbcLockSettings of(DataSource dataSource) {
    Copy c = new Copy();
    c.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    return new JdbcLockSettings(c);
  }

  /**
   * Settings for a JDBC URL ({@code jdbc:postgresql:}, {@code jdbc:mariadb:}, {@code jdbc:mysql:}
   * or {@code jdbc:h2:}); the backend pools its own connections. Other defaults as {@link
   * #of(DataSource)}.
   *
   * @throws IllegalArgumentException if the URL does not start with {@code jdbc:}
   */
  public static JdbcLockSettings of(String url) {
    Objects.requireNonNull(url, "url");
    if (!url.startsWith("jdbc:")) {
      throw new IllegalArgumentException(
          "url must be a JDBC URL starting with jdbc:, but was '" + LockClients.redact(url) + "'");
    }
    Copy c = new Copy();
    c.url = url;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with these credentials for the JDBC URL; they replace any in the URL.
   *
   * @throws IllegalStateException if these settings use a data source (it has its own)
   */
  public JdbcLockSettings withCredentials(String username, char[] password) {
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(password, "password");
    if (url == null) {
      throw new IllegalStateException(
          "credentials apply only to settings made from a JDBC URL; a DataSource has its own");
    }
    Copy c = new Copy(this);
    c.username = username;
    c.password = password.clone();
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with this mode. {@link JdbcLockMode#SESSION} and {@link JdbcLockMode#ROW}
   * keep one connection per held lock: see {@link #withMaxHeldLocks(int)}.
   */
  public JdbcLockSettings withMode(JdbcLockMode mode) {
    Copy c = new Copy(this);
    c.mode = Objects.requireNonNull(mode, "mode");
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with this table name. It is the only identifier put into SQL text, so it is
   * checked here: an unquoted SQL identifier. The fencing sequence is named {@code <table>_fence};
   * the connection-bound modes also use {@code <table>_held} and {@code <table>_rows}.
   *
   * @param table 1 to {@value #MAX_TABLE_LENGTH} characters: a letter or underscore, then letters,
   *     digits or underscores
   */
  public JdbcLockSettings withTable(String table) {
    Objects.requireNonNull(table, "table");
    if (table.isEmpty()
        || table.length() > MAX_TABLE_LENGTH
        || !IDENTIFIER.matcher(table).matches()) {
      throw new IllegalArgumentException(
          "table must have 1 to "
              + MAX_TABLE_LENGTH
              + " characters: a letter or underscore, then letters, digits or underscores, but"
              + " was '"
              + table
              + "'");
    }
    Copy c = new Copy(this);
    c.table = table;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings, creating the tables and sequence at start if they are missing (with the DDL
   * shipped in {@code io/dlock/jdbc/schema/}). Off by default: production schemas are usually
   * managed by migrations, and the database user of an application may not have DDL rights.
   */
  public JdbcLockSettings withCreateSchema(boolean createSchema) {
    Copy c = new Copy(this);
    c.createSchema = createSchema;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings, speaking to the database as {@code database} instead of as its metadata
   * says. Only {@link JdbcDatabase#MYSQL} on MariaDB differs from what detection picks (MariaDB
   * runs the MySQL statements unchanged); any other mismatch is refused at connect. The dialects
   * keep their fencing counters apart (a sequence, counter rows), so a table's tokens do not carry
   * over when its dialect changes: use a new table then.
   *
   * @param database the database, or null to read it from the connection's metadata (the default)
   */
  public JdbcLockSettings withDatabase(@Nullable JdbcDatabase database) {
    Copy c = new Copy(this);
    c.database = database;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with this statement timeout: the database cancels a statement that runs
   * longer ({@code Statement.setQueryTimeout}, whole seconds, rounded up). A backstop: the client's
   * operation timeout bounds every call anyway.
   *
   * @param statementTimeout from 1 s to 5 minutes
   */
  public JdbcLockSettings withStatementTimeout(Duration statementTimeout) {
    UriParameters.checkRange(
        "statementTimeout", statementTimeout, Duration.ofSeconds(1), Duration.ofMinutes(5));
    Copy c = new Copy(this);
    c.statementTimeout = statementTimeout;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with this connect timeout: the longest the backend waits for a connection
   * from its own pool, and for the driver to connect and log in. Only used with a JDBC URL.
   *
   * @param connectTimeout from 250 ms to 5 minutes
   */
  public JdbcLockSettings withConnectTimeout(Duration connectTimeout) {
    UriParameters.checkRange(
        "connectTimeout", connectTimeout, Duration.ofMillis(250), Duration.ofMinutes(5));
    Copy c = new Copy(this);
    c.connectTimeout = connectTimeout;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with at most this many database calls at once per client (threads of the
   * backend's executor; with a JDBC URL also its pool size, plus one connection for PostgreSQL's
   * release signals).
   *
   * @param maxConcurrentCalls from 1 to 64
   */
  public JdbcLockSettings withMaxConcurrentCalls(int maxConcurrentCalls) {
    UriParameters.checkRange("maxConcurrentCalls", maxConcurrentCalls, 1, 64);
    Copy c = new Copy(this);
    c.maxConcurrentCalls = maxConcurrentCalls;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with at most this many locks held at once by one client in the
   * connection-bound modes ({@link JdbcLockMode#SESSION}, {@link JdbcLockMode#ROW}), each on a
   * connection of its own. An acquisition beyond it fails with {@link
   * io.dlock.BackendUnavailableException} at once rather than waiting for a connection. With a JDBC
   * URL the backend's pool gets this many connections more; with a {@code DataSource}, size it for
   * {@code maxHeldLocks + maxConcurrentCalls + 1}. Unused in lease-row mode.
   *
   * @param maxHeldLocks from 1 to 1000
   */
  public JdbcLockSettings withMaxHeldLocks(int maxHeldLocks) {
    UriParameters.checkRange("maxHeldLocks", maxHeldLocks, 1, 1000);
    Copy c = new Copy(this);
    c.maxHeldLocks = maxHeldLocks;
    return new JdbcLockSettings(c);
  }

  /**
   * The same settings with this heartbeat interval for the connection-bound modes: every held
   * lock's connection that no renewal confirmed for this long is checked, so that a holder learns
   * within about this interval that the database ended its session (killed connection, restart) and
   * freed its lock. Waiters also re-check at least this often, since the database frees such a lock
   * without a release signal when the holder's connection dies. Unused in lease-row mode.
   *
   * @param heartbeatInterval from 50 ms to 1 minute
   */
  public JdbcLockSettings withHeartbeatInterval(Duration heartbeatInterval) {
    UriParameters.checkRange(
        "heartbeatInterval", heartbeatInterval, Duration.ofMillis(50), Duration.ofMinutes(1));
    Copy c = new Copy(this);
    c.heartbeatInterval = heartbeatInterval;
    return new JdbcLockSettings(c);
  }

  @Nullable DataSource dataSource() {
    return dataSource;
  }

  @Nullable String url() {
    return url;
  }

  @Nullable String username() {
    return username;
  }

  char @Nullable [] password() {
    return password == null ? null : password.clone();
  }

  public JdbcLockMode mode() {
    return mode;
  }

  public String table() {
    return table;
  }

  /** The database named by {@link #withDatabase}, or null to read it from the metadata. */
  public @Nullable JdbcDatabase database() {
    return database;
  }

  public boolean createSchema() {
    return createSchema;
  }

  public Duration statementTimeout() {
    return statementTimeout;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public int maxConcurrentCalls() {
    return maxConcurrentCalls;
  }

  public int maxHeldLocks() {
    return maxHeldLocks;
  }

  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** Where the locks are, without any password: for messages and logs. */
  public String describeTarget() {
    return url != null ? LockClients.redact(url) : "DataSource " + dataSource.getClass().getName();
  }

  @Override
  public String toString() {
    return "JdbcLockSettings["
        + describeTarget()
        + ", mode="
        + mode
        + ", table="
        + table
        + ", createSchema="
        + createSchema
        + "]";
  }
}
