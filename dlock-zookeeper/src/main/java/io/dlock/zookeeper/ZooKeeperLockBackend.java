package io.dlock.zookeeper;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LeaseEndTimer;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import io.dlock.spi.WaitQueue;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.jspecify.annotations.Nullable;

/**
 * Locks on ZooKeeper through Apache Curator: a fair queue of ephemeral sequential nodes per lock.
 *
 * <p><b>Guarantee.</b> The holder of a lock is the owner of the lowest queue node under the lock's
 * parent; ZooKeeper orders every create in one total order, so at most one owner is lowest at a
 * time. The fencing token is the holder node's {@code czxid}, which is ordered across the whole
 * ensemble and therefore strictly increases across grants, even when the parent is deleted and
 * created again. A waiter watches only the node just before its own, so a release wakes one client
 * (no herd).
 *
 * <p><b>Leases.</b> A queue node lives no longer than the session that created it: a crashed or
 * partitioned holder's node disappears when the ensemble expires its session. While the holder's
 * process lives, the lease time is also enforced: when a lease is neither released nor renewed
 * before it ends (a fixed lease, or renewal calls that stop), this backend deletes the holder's
 * node itself. It counts from when it received the grant or renewal, which is never earlier than
 * when the core started counting, so the node always outlives the holder's own view of its lease.
 * Connection events are passed to the core: SUSPENDED makes leases uncertain, RECONNECTED with the
 * same session makes them valid again, LOST (session expired, or Curator's simulated loss after the
 * session timeout) loses them all.
 *
 * <p><b>Latency.</b> The common calls (a new node and its queue listing, pipelined in one round
 * trip; a waiter's re-attempt, whose listing was requested when its predecessor's watch fired; the
 * release of a last hold; the abandon of a wait) send their requests from the calling thread and
 * complete on ZooKeeper's event thread; everything that must block runs on worker threads. The
 * calls of one owner on one lock still run one after another, in call order.
 *
 * <p><b>Inspection.</b> {@link ZooKeeperLockAdministration#inspect} and {@link
 * ZooKeeperLockAdministration#forceRelease} read the queue heads after a {@code sync}; the holder
 * description and grant time are kept in the node's data, next to the hold count.
 *
 * <p><b>Failures.</b> An acquisition or release made while the client is connecting (just started,
 * or reconnecting) waits for the connection, at most the connection timeout and never longer than
 * the core's bound for the caller; it then fails with {@link BackendUnavailableException}. Renewal
 * and inspection fail at once while not connected. Curator retries a call at most three times
 * within the connection timeout.
 *
 * <p><b>Session changes.</b> A waiter's predecessor watch dies with its session, so waiters are
 * woken on session loss and on a new session and queue again ({@link WaiterWakeUps}).
 *
 * <p><b>Parts.</b> This class is the SPI surface and wires the parts, the way Curator's lock recipe
 * sits on a framework that owns the connection: the connection and session handling (the gate, the
 * session id, the events of connection changes) is in {@link ZooKeeperSession}, the acquire path in
 * {@link QueueAcquisition}, release and abandon in {@link QueueRelease}, renewal and lease ends in
 * {@link QueueLeases} (timed by {@link LeaseEndTimer}), the bookkeeping per lock and owner in
 * {@link QueueEntries}, the requests on queue nodes in {@link QueueNodes}, the per-key call order
 * and worker threads in {@link OrderedCalls}, holds joined across clients of one owner id in {@link
 * JoinedHolds}, and inspection and forced release in {@link ZooKeeperLockAdministration}.
 */
public final class ZooKeeperLockBackend
    implements LockBackend, ReleaseSignals, WaitQueue, SessionBoundHolds {
  private static final AtomicInteger IDS = new AtomicInteger();

  /** How often a step is tried again when the queue or a node keeps changing under it. */
  static final int MAX_ROUNDS = 8;

  private final CuratorFramework client;
  private final boolean ownsClient;
  private final LockPaths paths;
  private final ExecutorService workers;
  private final ScheduledExecutorService timer;
  private final LeaseEndTimer<QueueEntry> leaseTimer;
  private final JoinedHolds joinedHolds;
  private final ZooKeeperLockAdministration administration;
  private final ZooKeeperSession session;
  private final QueueAcquisition acquisition;
  private final QueueRelease release;
  private final QueueLeases leases;
  private final ZooKeeperPermits permits;

  /**
   * Written only here (watchReleases, unwatchReleases); read by the predecessor watches and the
   * session wake-ups.
   */
  private final ConcurrentHashMap<String, ReleaseListener> listeners = new ConcurrentHashMap<>();

  private final AtomicBoolean closed = new AtomicBoolean();

  /** See {@link ZooKeeperLockSettings#withOwnerIdsSharedAcrossClients}. */
  private final boolean shareOwnerIds;

  private ZooKeeperLockBackend(
      CuratorFramework client, boolean ownsClient, String rootPath, boolean shareOwnerIds) {
    this.shareOwnerIds = shareOwnerIds;
    this.client = client;
    this.ownsClient = ownsClient;
    this.paths = new LockPaths(rootPath);
    String description = client.getZookeeperClient().getCurrentConnectionString() + rootPath;
    int id = IDS.incrementAndGet();
    // Calls block on ZooKeeper round trips on these threads, never on the caller's.
    this.workers = DriverThreads.blockingCalls("dlock-zk-" + id + "-worker", 64);
    this.timer = DriverThreads.timer("dlock-zk-" + id + "-leases");
    // Opened and closed only by the session; the ordered calls wait at it.
    ConnectionGate gate =
        new ConnectionGate(
            () -> client.getZookeeperClient().isConnected(),
            timer,
            Duration.ofMillis(client.getZookeeperClient().getConnectionTimeoutMs()),
            description);
    ZooKeeperFailures failures = new ZooKeeperFailures(client, description);
    QueueNodes nodes = new QueueNodes(client, failures);
    this.leaseTimer = new LeaseEndTimer<>(timer, entry -> leaseEnded(entry.key, entry));
    OrderedCalls calls = new OrderedCalls(workers, gate, closed::get, failures);
    this.joinedHolds =
        new JoinedHolds(client, nodes, leaseTimer, calls, failures, this::sharedNodeGone);
    this.administration = new ZooKeeperLockAdministration(client, paths, nodes, failures);
    QueueEntries entries = new QueueEntries(client, nodes, leaseTimer, joinedHolds);
    WaiterWakeUps wakeUps = new WaiterWakeUps();
    this.session =
        new ZooKeeperSession(
            client,
            nodes,
            gate,
            description,
            entries,
            joinedHolds,
            wakeUps,
            listeners,
            this::abandonAgain);
    this.acquisition =
        new QueueAcquisition(
            client,
            paths,
            entries,
            nodes,
            leaseTimer,
            calls,
            joinedHolds,
            failures,
            wakeUps,
            listeners,
            shareOwnerIds);
    this.release =
        new QueueRelease(
            client, paths, description, entries, nodes, calls, failures, wakeUps, session);
    this.leases =
        new QueueLeases(client, description, entries, nodes, leaseTimer, calls, failures, session);
    this.permits =
        new ZooKeeperPermits(
            client,
            rootPath,
            new OrderedCalls(workers, gate, closed::get, failures),
            timer,
            failures,
            description);
    // Last, and it must stay last: connection changes are applied from here on, and a reconnection
    // may call back into the release part (a deferred abandon) through abandonAgain.
    session.start();
  }

  /**
   * Connects to the ensemble of {@code settings} and waits for the first connection, at most the
   * connection timeout.
   *
   * @throws BackendUnavailableException if no connection was made within the connection timeout
   */
  public static ZooKeeperLockBackend connect(ZooKeeperLockSettings settings) {
    Objects.requireNonNull(settings, "settings");
    CuratorFramework client = CuratorClients.connect(settings);
    return new ZooKeeperLockBackend(
        client, true, settings.rootPath(), settings.ownerIdsSharedAcrossClients());
  }

  /**
   * A backend on an existing, started Curator client (its namespace applies). The client is not
   * closed by {@link #close()}; its connection and retry settings are the caller's.
   *
   * @param rootPath see {@link ZooKeeperLockSettings#withRootPath(String)}
   */
  public static ZooKeeperLockBackend using(CuratorFramework client, String rootPath) {
    Objects.requireNonNull(client, "client");
    return new ZooKeeperLockBackend(
        client, false, ZooKeeperLockSettings.requireValidRootPath(rootPath), false);
  }

  @Override
  public boolean sharesOwnerIdsAcrossClients() {
    return shareOwnerIds;
  }

  @Override
  public String name() {
    return "zookeeper";
  }

  /** The Curator client under this backend; for tests and diagnostics. */
  public CuratorFramework curator() {
    return client;
  }

  /** The root path under which the lock queues live. */
  public String rootPath() {
    return paths.root();
  }

  /**
   * Watch notifications (node events, not connection-state events) this backend has received since
   * it was created. A release wakes exactly one waiter, so it costs one notification.
   */
  public long watchNotifications() {
    return acquisition.watchNotifications();
  }

  // ---- acquisition ----------------------------------------------------------------------------

  @Override
  public void start(BackendContext context) {
    leaseTimer.useClock(context.clock());
    permits.start(context.clock());
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.of(this);
  }

  @Override
  public Optional<WaitQueue> waitQueue() {
    return Optional.of(this);
  }

  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return Optional.of(this);
  }

  /**
   * Semaphores: a fair queue per semaphore under {@code <root>/.semaphores}, whose head grants
   * itself in one version-checked transaction (see {@link ZooKeeperPermits}).
   */
  @Override
  public Optional<PermitStore> permits() {
    return Optional.of(permits);
  }

  /**
   * Inspection reads the queue heads after a {@code sync}, so the answer includes every grant made
   * before the call; a forced release deletes the head node, version-checked (see {@link
   * ZooKeeperLockAdministration}).
   */
  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(administration);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner lockOwner, Duration lease) {
    return acquisition.tryAcquire(lockName, lockOwner, lease);
  }

  // ---- release, abandon -----------------------------------------------------------------------

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    return release.release(lockName, owner, fencingToken);
  }

  @Override
  public CompletableFuture<Void> abandon(String lockName, LockOwner owner) {
    return release.abandon(lockName, owner);
  }

  /**
   * A wait whose clean-up failed for want of a connection, retried now that the session is back.
   */
  private void abandonAgain(LockAndOwner key) {
    release.dropWait(key.lockName(), key.owner());
  }

  // ---- leases ---------------------------------------------------------------------------------

  /**
   * One pipelined existence check per lease, against its node's czxid (see {@link QueueLeases}).
   */
  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return this.leases.renew(leases);
  }

  private void leaseEnded(LockAndOwner key, QueueEntry entry) {
    leases.leaseEnded(key, entry);
  }

  private void sharedNodeGone(SharedNodeWatch watch) {
    leases.sharedNodeGone(watch);
  }

  // ---- release signals and session events -----------------------------------------------------

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
    // The watches themselves are set by tryAcquire, on each waiter's predecessor; the core
    // re-attempts once this completes, so a watch that fired before now is not lost.
    listeners.put(lockName, listener);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void unwatchReleases(String lockName) {
    listeners.remove(lockName);
  }

  @Override
  public void bindEvents(BackendEvents events) {
    session.bindEvents(events);
  }

  /**
   * Applies a connection change (see {@link ZooKeeperSession#onConnectionState}). Package-private
   * so that tests can apply a change at a chosen moment of a call.
   */
  void onConnectionState(CuratorFramework c, ConnectionState state) {
    session.onConnectionState(c, state);
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    session.close(); // stops listening, then fails the calls waiting for a connection
    permits.close();
    timer.shutdownNow();
    workers.shutdown();
    try {
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdownNow();
    if (ownsClient) {
      client.close();
    }
  }

  /** For tests: {@code hook} runs before each try of a create on the slow path. */
  void beforeCreate(QueueAcquisition.@Nullable BeforeCreate hook) {
    acquisition.beforeCreate(hook);
  }

  /** For tests: {@code hook} runs with a created node's path just before it is tracked. */
  void beforeTracking(java.util.function.@Nullable Consumer<String> hook) {
    acquisition.beforeTracking(hook);
  }

  /** For tests: {@code hook} runs with the joined node's path between the read and the write. */
  void beforeJoinWrite(java.util.function.@Nullable Consumer<String> hook) {
    joinedHolds.beforeJoinWrite(hook);
  }

  /** For tests: the lock waits' clean-ups kept for the reconnection. */
  DeferredCleanups deferredAbandons() {
    return session.abandonAfterReconnect();
  }
}
