package io.dlock.spring.autoconfigure;

import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code dlock.*} properties. The backend is chosen, in order: a {@link io.dlock.LockClient}
 * bean of the application; {@code dlock.backend} (a URI, turned into a client by {@link
 * io.dlock.LockClients#connect}, the same call the command line makes, with {@code
 * dlock.backend-properties} playing the part of the command line's {@code --config} file).
 */
@ConfigurationProperties(prefix = "dlock")
public class DlockProperties {

  /**
   * Whether the starter configures anything at all. false: no client, and @Locked methods run
   * without their lock (logged as a warning at start-up, naming them).
   */
  private boolean enabled = true;

  /**
   * The backend URI: redis://host:port, rediss://..., zk://host:port/root, jdbc:postgresql://...,
   * jdbc:mariadb://... or jdbc:h2:... The matching backend module must be on the class path.
   */
  private @Nullable String backend;

  /**
   * Which of the application's beans the client is built on when dlock.backend is not set and more
   * than one could serve: curator-framework, lettuce-connection-factory or data-source. Unset: the
   * only one there is; with more than one, the start-up fails naming them.
   */
  private @Nullable String backendBean;

  /**
   * Backend settings that do not belong in the URI, in Spring's spelling (key-prefix) or the
   * backend's (keyPrefix); a key the backend does not read fails the start-up. Redis: username,
   * password, key-prefix (of the Redis keys, default "dlock:"), command-timeout (ISO-8601 such as
   * PT2S). Redlock: key-prefix, node-timeout. ZooKeeper: session-timeout, connection-timeout, acl,
   * username, password, follow-ensemble-changes, owner-ids-shared-across-clients. JDBC: username,
   * password, mode, table, database, create-schema.
   */
  private Map<String, String> backendProperties = new LinkedHashMap<>();

  /**
   * Prepended to every lock name the starter builds (@Locked, the Spring Integration lock registry,
   * the ShedLock provider), for example "orders-service:". Empty by default.
   */
  private String keyPrefix = "";

  /** How long @Locked waits for a lock when its waitTime is not set. Zero: one attempt. */
  private Duration waitTime = Duration.ofSeconds(5);

  /** The lease time of locks taken by the starter when @Locked does not set one. */
  private Duration leaseTime = Duration.ofSeconds(30);

  /**
   * Whether leases are renewed while their holder runs (true), or fixed and expire after their
   * lease time even if the method still runs (false).
   */
  private boolean renewLease = true;

  /** The longest a single backend call may take before it fails (1 ms to 5 min). */
  private Duration operationTimeout = Duration.ofSeconds(5);

  /**
   * Whether the application fails to start when the lock server does not answer within the
   * operation timeout (true), or starts and connects when the server comes (false): until then lock
   * calls fail with BackendUnavailableException and the health check reports DOWN. A
   * misconfiguration (an unknown property, a missing lock table) fails the start either way.
   */
  private boolean failFast = false;

  /**
   * Whether a @Locked method that runs inside a Spring-managed transaction keeps its lock until
   * that transaction completed (commit or rollback). Switching this off lets the next holder read
   * data the transaction has not committed yet: the lost-update and duplicate-insert race.
   */
  private boolean releaseAfterTransaction = true;

  /** Settings of a client built over the application's DataSource (dlock-jdbc). */
  private final Jdbc jdbc = new Jdbc();

  /** Settings of a client built over the application's CuratorFramework (dlock-zookeeper). */
  private final Zookeeper zookeeper = new Zookeeper();

  /** How web requests answer a lock that was not acquired. */
  private final Web web = new Web();

  /** The leader election the starter joins, for @LeaderOnly methods and leadership events. */
  private final Election election = new Election();

  /** The lock name the health indicator takes and releases to check that the backend answers. */
  private String healthLockName = "dlock-health-check";

  public Jdbc getJdbc() {
    return jdbc;
  }

  public Web getWeb() {
    return web;
  }

  public Election getElection() {
    return election;
  }

  public Zookeeper getZookeeper() {
    return zookeeper;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public @Nullable String getBackend() {
    return backend;
  }

  public void setBackend(@Nullable String backend) {
    this.backend = backend;
  }

  public @Nullable String getBackendBean() {
    return backendBean;
  }

  public void setBackendBean(@Nullable String backendBean) {
    this.backendBean = backendBean;
  }

  public Map<String, String> getBackendProperties() {
    return backendProperties;
  }

  public void setBackendProperties(Map<String, String> backendProperties) {
    this.backendProperties = backendProperties;
  }

  public String getKeyPrefix() {
    return keyPrefix;
  }

  public void setKeyPrefix(String keyPrefix) {
    this.keyPrefix = keyPrefix;
  }

  public Duration getWaitTime() {
    return waitTime;
  }

  public void setWaitTime(Duration waitTime) {
    this.waitTime = waitTime;
  }

  public Duration getLeaseTime() {
    return leaseTime;
  }

  public void setLeaseTime(Duration leaseTime) {
    this.leaseTime = leaseTime;
  }

  public boolean isRenewLease() {
    return renewLease;
  }

  public void setRenewLease(boolean renewLease) {
    this.renewLease = renewLease;
  }

  public Duration getOperationTimeout() {
    return operationTimeout;
  }

  public void setOperationTimeout(Duration operationTimeout) {
    this.operationTimeout = operationTimeout;
  }

  public boolean isFailFast() {
    return failFast;
  }

  public void setFailFast(boolean failFast) {
    this.failFast = failFast;
  }

  public boolean isReleaseAfterTransaction() {
    return releaseAfterTransaction;
  }

  public void setReleaseAfterTransaction(boolean releaseAfterTransaction) {
    this.releaseAfterTransaction = releaseAfterTransaction;
  }

  public String getHealthLockName() {
    return healthLockName;
  }

  public void setHealthLockName(String healthLockName) {
    this.healthLockName = healthLockName;
  }

  /**
   * The default lock options these properties describe.
   *
   * @throws IllegalArgumentException naming the property if the lease time is out of range
   */
  public LockOptions toLockOptions() {
    try {
      return renewLease
          ? LockOptions.defaults().withRenewedLease(leaseTime)
          : LockOptions.defaults().withFixedLease(leaseTime);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("dlock.lease-time: " + e.getMessage(), e);
    }
  }

  /**
   * The client options these properties describe.
   *
   * @throws IllegalArgumentException naming the property if a value is out of range
   */
  public LockClientOptions toClientOptions() {
    LockOptions lockOptions = toLockOptions();
    try {
      return LockClientOptions.defaults()
          .withDefaultLockOptions(lockOptions)
          .withOperationTimeout(operationTimeout);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("dlock.operation-timeout: " + e.getMessage(), e);
    }
  }

  /**
   * The default wait, checked.
   *
   * @throws IllegalArgumentException if negative
   */
  public Duration checkedWaitTime() {
    if (waitTime.isNegative()) {
      throw new IllegalArgumentException("dlock.wait-time must be >= 0, but was " + waitTime);
    }
    return waitTime;
  }

  /** {@code dlock.jdbc.*}: a client over the application's {@code DataSource}. */
  public static class Jdbc {
    /** The lock table (lease rows); its fencing sequence is named <table>_fence. */
    private String table = "dlock_locks";

    /**
     * Whether to create the lock table and sequence at start if missing. Off by default: schemas
     * are usually managed by migrations (the DDL is in io/dlock/jdbc/schema/ of dlock-jdbc).
     */
    private boolean createSchema = false;

    public String getTable() {
      return table;
    }

    public void setTable(String table) {
      this.table = table;
    }

    public boolean isCreateSchema() {
      return createSchema;
    }

    public void setCreateSchema(boolean createSchema) {
      this.createSchema = createSchema;
    }
  }

  /** {@code dlock.zookeeper.*}: a client over the application's {@code CuratorFramework}. */
  public static class Zookeeper {
    /** The znode under which locks live (under the Curator client's namespace, if any). */
    private String rootPath = "/dlock";

    public String getRootPath() {
      return rootPath;
    }

    public void setRootPath(String rootPath) {
      this.rootPath = rootPath;
    }
  }

  /**
   * {@code dlock.election.*}: the starter's leader election ({@code
   * io.dlock.spring.election.DlockLeaderElection}), made only when a name is set.
   */
  public static class Election {
    /**
     * The name of the leader election this instance competes in, the same on every instance that
     * shares the leader-only work; a lock name, prefixed with dlock.key-prefix, that no other lock
     * may use. Unset: no election, and a @LeaderOnly method fails the start-up.
     */
    private @Nullable String name;

    /**
     * The lease of a term, renewed while this instance leads: a leader that dies is replaced within
     * about this time.
     */
    private Duration leaseTime = Duration.ofSeconds(15);

    public @Nullable String getName() {
      return name;
    }

    public void setName(@Nullable String name) {
      this.name = name;
    }

    public Duration getLeaseTime() {
      return leaseTime;
    }

    public void setLeaseTime(Duration leaseTime) {
      this.leaseTime = leaseTime;
    }

    /**
     * The lock options of the election's terms: a renewed lease of the lease time.
     *
     * @throws IllegalArgumentException naming the property if the lease time is out of range
     */
    public LockOptions toLockOptions() {
      try {
        return LockOptions.defaults().withRenewedLease(leaseTime);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("dlock.election.lease-time: " + e.getMessage(), e);
      }
    }
  }

  /** {@code dlock.web.*}: the answers of Spring MVC and WebFlux to locks not acquired. */
  public static class Web {
    /** RFC 9457 problem details for LockTimeoutException and BackendUnavailableException. */
    private final ProblemDetails problemDetails = new ProblemDetails();

    public ProblemDetails getProblemDetails() {
      return problemDetails;
    }
  }

  /** {@code dlock.web.problem-details.*}. */
  public static class ProblemDetails {
    /**
     * Whether a controller advice answers LockTimeoutException with lock-timeout-status and
     * BackendUnavailableException with 503, as RFC 9457 problem details, instead of a 500 logged as
     * an error.
     */
    private boolean enabled = false;

    /** The HTTP status of a lock not acquired within its wait: 409 (Conflict) or 423 (Locked). */
    private int lockTimeoutStatus = 409;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public int getLockTimeoutStatus() {
      return lockTimeoutStatus;
    }

    public void setLockTimeoutStatus(int lockTimeoutStatus) {
      this.lockTimeoutStatus = lockTimeoutStatus;
    }
  }
}
