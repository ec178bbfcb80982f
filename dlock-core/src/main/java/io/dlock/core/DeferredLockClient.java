package io.dlock.core;

import io.dlock.BackendCapability;
import io.dlock.DistributedLock;
import io.dlock.HeldLeaseInfo;
import io.dlock.LeaderElection;
import io.dlock.LeadershipListener;
import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockEventListener.AcquireFailure;
import io.dlock.LockInfo;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.PermitStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client whose server was not there when the application started: it starts anyway, and connects
 * when the server comes (as Spring Data Redis and Curator do), instead of stopping the application.
 * Until then every call that needs the server fails with {@link
 * io.dlock.BackendUnavailableException} within its own bound (a health check reports DOWN), and
 * holds nothing; from then on every call goes to the connected client, which keeps its own
 * connection from there (the drivers reconnect).
 */
public final class DeferredLockClient implements LockClient, SemaphoreHost {
  private static final Logger log = LoggerFactory.getLogger(DeferredLockClient.class);

  private final String backendName;
  private final LockClientOptions options;
  private final BackendConnector connector;
  // The notices of its elections' candidacies, in order (the connected client's are its own).
  private final ExecutorService events =
      Executors.newSingleThreadExecutor(DriverThreads.daemon("dlock-deferred-events"));

  private DeferredLockClient(
      String backendName, LockClientOptions options, BackendConnector connector) {
    this.backendName = backendName;
    this.options = options;
    this.connector = connector;
  }

  /**
   * A client made by {@code connect}: the one it makes within the options' operation timeout, or
   * else one that connects in the background.
   *
   * @param backendName what {@link #backendName()} says before the connection (metrics tag it)
   * @param target the server, for messages ({@code redis://cache:6379}, secrets left out)
   * @throws RuntimeException what {@code connect} threw at once if it is not {@link
   *     io.dlock.BackendUnavailableException}: a misconfiguration fails the start as before
   */
  public static LockClient connect(
      String backendName, String target, Supplier<LockClient> connect, LockClientOptions options) {
    Objects.requireNonNull(backendName, "backendName");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(connect, "connect");
    Objects.requireNonNull(options, "options");
    BackendConnector connector = new BackendConnector(target, connect, options.clock());
    LockClient client = connector.firstAttempt(options.operationTimeout().toNanos());
    if (client != null) {
      return client; // as it is: the connector's threads ended when it connected
    }
    log.warn(
        "Starting without a connection to {}: lock calls fail with BackendUnavailableException"
            + " (and the health check reports DOWN) until it answers",
        target);
    return new DeferredLockClient(backendName, options, connector);
  }

  /** The client once connected, else null. */
  @Nullable LockClient connected() {
    return connector.connected();
  }

  /**
   * The connected client, waiting for it at most {@code bound}.
   *
   * @param interruptible whether an interrupt ends the wait ({@link
   *     io.dlock.LockInterruptedException}) or is kept for afterwards
   */
  LockClient await(long boundNanos, boolean interruptible) {
    return connector.await(boundNanos, interruptible);
  }

  BackendConnector connector() {
    return connector;
  }

  LockClientOptions options() {
    return options;
  }

  /** Tells the event listener of a call that failed for want of a connection (metrics count it). */
  void reportUnavailable(String lockName, long startNanos) {
    reportNotAcquired(lockName, AcquireFailure.BACKEND_UNAVAILABLE, startNanos);
  }

  /** Tells the event listener of a call that ended while it waited for the connection. */
  void reportNotAcquired(String name, AcquireFailure failure, long startNanos) {
    // A permit's grant name is the core's: the listener (and metrics) know the semaphore's name.
    String lockName = PermitGrantName.displayName(name);
    try {
      options
          .eventListener()
          .notAcquired(
              lockName,
              failure,
              Duration.ofNanos(Math.max(0, options.clock().nanoTime() - startNanos)));
    } catch (RuntimeException e) {
      log.warn("The lock event listener failed on lock '{}'", lockName, e);
    }
  }

  @Override
  public DistributedLock lock(String name) {
    return lock(name, options.defaultLockOptions());
  }

  @Override
  public DistributedLock lock(String name, LockOptions lockOptions) {
    return new DeferredLock(
        this, LockNames.requireValid(name), Objects.requireNonNull(lockOptions, "options"));
  }

  @Override
  public LeaderElection election(String name, LeadershipListener listener) {
    return election(name, options.defaultLockOptions(), listener);
  }

  /** A candidacy that competes once connected; its notices come on this client's event thread. */
  @Override
  public LeaderElection election(
      String name, LockOptions lockOptions, LeadershipListener listener) {
    return new Candidacy(this, LockNames.requireValid(name), lockOptions, listener, this::tell);
  }

  @Override
  public LeasedSemaphore semaphore(String name, int permits) {
    return semaphore(name, permits, options.defaultLockOptions());
  }

  /**
   * A semaphore whose calls wait for the connection as a lock's do; a backend without semaphores is
   * refused at the first call that reaches it.
   */
  @Override
  public LeasedSemaphore semaphore(String name, int permits, LockOptions lockOptions) {
    return new NamedSemaphore(this, name, permits, lockOptions);
  }

  @Override
  public DistributedLock permitLock(String grantName, LockOptions lockOptions) {
    return new DeferredLock(this, grantName, lockOptions);
  }

  @Override
  public <T> T callStore(Function<PermitStore, CompletableFuture<T>> call, String what) {
    return host(await(options.operationTimeout().toNanos(), false)).callStore(call, what);
  }

  @Override
  public void permitGranted(String grantName) {
    LockClient client = connected();
    if (client instanceof CoreLockClient core) {
      core.semaphores().permitGranted(grantName);
    }
  }

  /**
   * The connected client as a semaphore's host.
   *
   * @throws UnsupportedOperationException if the application's connect made a client of its own
   *     (not a cast's ClassCastException, thrown where a grant was already made)
   */
  static SemaphoreHost host(LockClient connected) {
    if (connected instanceof CoreLockClient core) {
      return core.semaphores();
    }
    throw new UnsupportedOperationException(
        "Semaphores of a client that connects later need the core's client, but the connect"
            + " function made a "
            + connected.getClass().getName());
  }

  /** Runs {@code task} on the client's event thread (see {@link Notices#tell}). */
  void tell(Runnable task) {
    Notices.tell(events, task);
  }

  @Override
  public List<HeldLeaseInfo> heldLeases() {
    LockClient client = connected();
    return client == null ? List.of() : client.heldLeases(); // nothing is held without a server
  }

  @Override
  public List<LockInfo> inspect(String namePattern) {
    return await(options.operationTimeout().toNanos(), false).inspect(namePattern);
  }

  @Override
  public Optional<LockInfo> forceRelease(String name) {
    return await(options.operationTimeout().toNanos(), false).forceRelease(name);
  }

  @Override
  public Set<BackendCapability> capabilities() {
    return await(options.operationTimeout().toNanos(), false).capabilities();
  }

  @Override
  public String backendName() {
    return backendName;
  }

  @Override
  public void close() {
    connector.close();
    events.shutdown();
  }
}
