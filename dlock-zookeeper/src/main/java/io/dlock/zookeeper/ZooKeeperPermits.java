package io.dlock.zookeeper;

import io.dlock.MonotonicClock;
import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LeaseEndTimer;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leased semaphores on ZooKeeper: a fair queue of waiter nodes per semaphore whose head turns
 * itself into a holder node when its permits fit (see {@link PermitQueue} for the guarantee and
 * {@link PermitPaths} for the layout). Semaphores live under {@code <root>/.semaphores}, apart from
 * every lock.
 *
 * <p><b>Leases.</b> As for locks, a holder node lives no longer than its session (the core reports
 * a suspended or lost session for permits as for locks), and while its process lives the lease time
 * is also enforced: a lease neither released nor renewed in time has its node deleted by this
 * client, counted from when it received the grant or renewal. So {@link PermitInfo#leaseRemaining}
 * is null: no server clock keeps it.
 *
 * <p><b>Signals.</b> Each waiting acquisition is woken by its own watch, with its owner key (see
 * {@link PermitWaiters}): a release costs one notification, to the waiter whose turn it is.
 *
 * <p><b>Threads.</b> The calls of one owner on one semaphore run one after another on the backend's
 * worker threads ({@link OrderedCalls}), so the clean-up of a wait always sees the node of the
 * attempt before it; a call waits for a connection as the lock calls do. Renewal is pipelined from
 * the calling thread and fails at once while not connected.
 */
final class ZooKeeperPermits implements PermitStore {
  // The backend's logger: what this logs is configured under the backend's name.
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

  private final CuratorFramework client;
  private final OrderedCalls calls;
  private final LeaseEndTimer<PermitHold> leaseTimer;
  private final PermitWaiters waiters;
  private final PermitQueue queue;
  private final PermitHolds holders;
  private final ConnectionStateListener connectionListener = (c, state) -> onConnection(state);

  /** Waits whose clean-up failed for want of a connection: retried when it is back. */
  private final DeferredCleanups leaveAfterReconnect = new DeferredCleanups(this::leave);

  /**
   * @param lockRoot the backend's root path
   * @param calls the permits' own ordered calls, over the backend's workers and connection gate
   * @param timer the backend's timer thread, which it shuts down
   * @param description the ensemble and root, for messages
   */
  ZooKeeperPermits(
      CuratorFramework client,
      String lockRoot,
      OrderedCalls calls,
      java.util.concurrent.ScheduledExecutorService timer,
      ZooKeeperFailures failures,
      String description) {
    this.client = client;
    this.calls = calls;
    this.leaseTimer = new LeaseEndTimer<>(timer, this::leaseDue);
    this.waiters = new PermitWaiters(client);
    PermitPaths paths = new PermitPaths(lockRoot);
    ConcurrentHashMap<LockAndOwner, PermitHold> holds = new ConcurrentHashMap<>();
    this.queue = new PermitQueue(client, paths, failures, holds, leaseTimer, waiters);
    this.holders = new PermitHolds(client, paths, description, failures, holds, leaseTimer);
    client.getConnectionStateListenable().addListener(connectionListener);
  }

  /** Measures lease ends on the client's clock; see {@link LeaseEndTimer#useClock}. */
  void start(MonotonicClock clock) {
    leaseTimer.useClock(clock);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String semaphore, int permits, int count, LockOwner owner, Duration lease) {
    LockAndOwner key = new LockAndOwner(semaphore, owner.key());
    // On the caller's thread: the description names the thread that acquires.
    String description =
        LockPaths.description(System.currentTimeMillis(), HolderDescription.of(owner));
    waiters.asked(key); // woken from now on by a session change, until granted or given up
    long askedAt = leaseTimer.now(); // the core counts the lease from about now
    return calls.submit(
        key,
        "acquire permits of '" + semaphore + "'",
        () -> queue.acquire(key, permits, count, lease.toNanos(), askedAt, description));
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String semaphore, LockOwner owner, long fencingToken) {
    LockAndOwner key = new LockAndOwner(semaphore, owner.key());
    return calls.submit(
        key, "release permits of '" + semaphore + "'", () -> holders.release(key, fencingToken));
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return holders.renew(leases);
  }

  @Override
  public CompletableFuture<Void> watchReleases(String semaphore, ReleaseListener listener) {
    // The watches are set by the attempts; the core attempts again once this completes, so a
    // watch that fired before now is not lost.
    waiters.listen(semaphore, listener);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void unwatchReleases(String semaphore) {
    waiters.unlisten(semaphore);
  }

  /**
   * Queued behind the owner's earlier calls (so it sees their nodes) but not waited for; if the
   * connection is down it is retried once it is back (a node of a session that ended is gone with
   * it anyway).
   *
   * <p>With nothing pending for the owner (a refused {@code tryAcquire}, a wait that timed out) and
   * the client connected, the delete of its waiter node is sent from the calling thread, before any
   * later request of this client: ZooKeeper answers a session's requests in order, so the client's
   * next attempt (another owner: each acquisition has its own) does not find itself queued behind
   * this abandoned node, which strict fairness would make it wait for. Otherwise (an attempt still
   * under way, no connection, a node not known) the clean-up lists the queue first, and a next
   * attempt may meet the node and wait for its delete (fairness only: it is woken then).
   */
  @Override
  public CompletableFuture<Void> abandon(String semaphore, LockOwner owner) {
    LockAndOwner key = new LockAndOwner(semaphore, owner.key());
    waiters.done(key);
    leave(key);
    return CompletableFuture.completedFuture(null);
  }

  private void leave(LockAndOwner key) {
    long generation = leaveAfterReconnect.generation(); // before the clean-up can fail
    calls
        .submitAsync(
            key,
            "abandon wait for permits of '" + key.lockName() + "'",
            false,
            () -> leaveFast(key))
        .whenComplete(
            (v, failure) -> {
              if (failure != null) {
                log.debug("Abandon of permits of '{}' deferred: {}", key.lockName(), failure);
                leaveAfterReconnect.failed(key, generation);
              }
            });
  }

  /**
   * Deletes the known waiter node with one background request; a wait whose node is not known (its
   * last attempt failed, or a deferred clean-up) has its nodes looked for on a worker.
   */
  private CompletableFuture<Void> leaveFast(LockAndOwner key) {
    String node = queue.forgetWaiter(key);
    if (node == null || !client.getZookeeperClient().isConnected()) {
      return leaveOnWorker(key);
    }
    CompletableFuture<KeeperException.Code> answer = new CompletableFuture<>();
    try {
      client
          .delete()
          .inBackground(
              (c, event) -> answer.complete(KeeperException.Code.get(event.getResultCode())))
          .forPath(node);
    } catch (Exception e) {
      return leaveOnWorker(key);
    }
    return answer.thenCompose(
        code ->
            code == KeeperException.Code.OK || code == KeeperException.Code.NONODE
                ? CompletableFuture.completedFuture(null)
                : leaveOnWorker(key));
  }

  private CompletableFuture<Void> leaveOnWorker(LockAndOwner key) {
    return calls.onWorker(
        "abandon wait for permits of '" + key.lockName() + "'",
        () -> {
          queue.leave(key);
          return null;
        });
  }

  @Override
  public CompletableFuture<List<PermitInfo>> holders(String semaphore) {
    return calls.onWorker(
        "list holders of permits of '" + semaphore + "'", () -> holders.holders(semaphore));
  }

  @Override
  public CompletableFuture<Optional<PermitInfo>> forceRelease(String semaphore, long fencingToken) {
    return calls.onWorker(
        "force release of permits of '" + semaphore + "'",
        () -> holders.forceRelease(semaphore, fencingToken));
  }

  /** On the timer thread: the lease end is handled on a worker, in turn with the owner's calls. */
  private void leaseDue(PermitHold hold) {
    calls
        .submit(
            hold.key,
            "end lease of permits of '" + hold.key.lockName() + "'",
            false,
            () -> holders.endLease(hold))
        .whenComplete(
            (renewed, failure) -> {
              if (failure != null) {
                // Not connected: try again shortly; if the session dies, the node dies with it.
                leaseTimer.register(hold, leaseTimer.now() + TimeUnit.MILLISECONDS.toNanos(200));
              }
            });
  }

  /**
   * Watches die with their session, and a reconnection may come with a new session: either way the
   * waiters try again (and queue anew). Deferred clean-ups run once the connection is back.
   */
  private void onConnection(ConnectionState state) {
    if (state == ConnectionState.LOST) {
      waiters.wakeAll("ZooKeeper session lost");
    } else if (state == ConnectionState.RECONNECTED) {
      // With either session: a new one's nodes are gone, and the clean-up then finds none.
      leaveAfterReconnect.reconnected();
      waiters.wakeAll("ZooKeeper connection back");
    }
  }

  /** The deferred clean-ups of waits; for tests. */
  DeferredCleanups deferredLeaves() {
    return leaveAfterReconnect;
  }

  /** Stops listening to the connection (the backend's threads are the backend's to stop). */
  void close() {
    client.getConnectionStateListenable().removeListener(connectionListener);
  }
}
