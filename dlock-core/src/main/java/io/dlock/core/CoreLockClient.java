package io.dlock.core;

import io.dlock.BackendCapability;
import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.HeldLeaseInfo;
import io.dlock.LeaderElection;
import io.dlock.LeadershipListener;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockInfo;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.MonotonicClock;
import io.dlock.spi.BackendContext;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import io.dlock.spi.WaitQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link LockClient} over any {@link LockBackend}. Backends build one of these with {@link
 * #create(LockBackend, LockClientOptions)}; applications only see the {@link LockClient} interface.
 */
public final class CoreLockClient implements LockClient {
  private static final Logger log = LoggerFactory.getLogger(CoreLockClient.class);
  private static final AtomicInteger CLIENT_IDS = new AtomicInteger();

  private final LockBackend backend;
  private final LockClientOptions options;
  private final MonotonicClock clock;
  private final long operationTimeoutNanos;
  private final ConcurrentHashMap<GrantKey, Grant> grants = new ConcurrentHashMap<>();
  private final ReleaseWaiters waiters;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService events;
  private volatile @Nullable Thread eventsThread; // close() never waits for it from itself
  private final ExecutorService asyncSteps;
  private final ExecutorService asyncCallbacks;
  private final Set<AsyncAcquisition> pendingAsync = ConcurrentHashMap.newKeySet();
  private final LeaseRenewer renewer;
  private final SessionEvents sessionEvents;
  private final LockEvents lockEvents;
  private final Acquisitions acquisitions;
  private final BlockingAcquisition blocking;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CallsInFlight blockingCalls = new CallsInFlight();

  // The backend's abilities, asked for once.
  private final BackendAbilities abilities;
  private final ClientSemaphores semaphores;

  /** The most attempts of asynchronous acquisitions answered at once. */
  private static final int ASYNC_STEP_THREADS = 64;

  private CoreLockClient(LockBackend given, LockClientOptions options) {
    LockBackend backend = PermitRouting.wrap(given);
    this.backend = backend;
    this.options = options;
    this.clock = options.clock();
    this.operationTimeoutNanos = options.operationTimeout().toNanos();
    int id = CLIENT_IDS.incrementAndGet();
    this.scheduler = DriverThreads.timer("dlock-" + id + "-renewer");
    ThreadFactory eventThreads = DriverThreads.daemon("dlock-" + id + "-events");
    this.events =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = eventThreads.newThread(runnable);
              eventsThread = thread;
              return thread;
            });
    // Asynchronous acquisitions hold a thread only while one attempt is answered, never while they
    // wait (see AsyncAcquisition): a small bound serves any number of waiting acquisitions.
    this.asyncSteps = DriverThreads.blockingCalls("dlock-" + id + "-acquire", ASYNC_STEP_THREADS);
    // Futures of asynchronous acquisitions complete here: what callers chain to them may block.
    this.asyncCallbacks = DriverThreads.onDemand("dlock-" + id + "-callback");
    this.abilities = BackendAbilities.of(this.backend);
    this.semaphores = new ClientSemaphores(this, abilities);
    ReleaseSignals signals = abilities.signals();
    WaitQueue waitQueue = abilities.waitQueue();
    SessionBoundHolds sessions = abilities.sessions();
    this.waiters = new ReleaseWaiters(signals);
    this.lockEvents = new LockEvents(options.eventListener(), clock, "dlock-" + id + "-listener");
    this.renewer =
        new LeaseRenewer(
            backend, clock, options.operationTimeout(), scheduler, lockEvents, grants.values());
    this.sessionEvents = new SessionEvents(backend.name(), grants.values());
    this.acquisitions =
        new Acquisitions(
            this,
            backend,
            clock,
            operationTimeoutNanos,
            waiters,
            signals != null,
            waitQueue,
            sessionEvents,
            lockEvents,
            renewer);
    this.blocking = new BlockingAcquisition(this, acquisitions, clock, lockEvents);
    try {
      backend.start(new BackendContext(clock, options.operationTimeout()));
      if (sessions != null) {
        sessions.bindEvents(sessionEvents);
      }
    } catch (RuntimeException | Error e) {
      stopThreads();
      backend.close();
      throw e;
    }
  }

  @Override
  public Set<BackendCapability> capabilities() {
    return abilities.capabilities();
  }

  /** A client over {@code backend}; closing the client closes the backend. */
  public static LockClient create(LockBackend backend, LockClientOptions options) {
    return new CoreLockClient(
        Objects.requireNonNull(backend, "backend"), Objects.requireNonNull(options, "options"));
  }

  @Override
  public DistributedLock lock(String name) {
    return lock(name, options.defaultLockOptions());
  }

  @Override
  public DistributedLock lock(String name, LockOptions lockOptions) {
    return new NamedLock(
        this, LockNames.requireValid(name), Objects.requireNonNull(lockOptions, "options"));
  }

  @Override
  public String backendName() {
    return backend.name();
  }

  @Override
  public LeaderElection election(String name, LeadershipListener listener) {
    return election(name, options.defaultLockOptions(), listener);
  }

  @Override
  public LeaderElection election(
      String name, LockOptions lockOptions, LeadershipListener listener) {
    ensureOpen();
    return new Candidacy(this, LockNames.requireValid(name), lockOptions, listener, this::tell);
  }

  @Override
  public LeasedSemaphore semaphore(String name, int permits) {
    return semaphore(name, permits, options.defaultLockOptions());
  }

  @Override
  public LeasedSemaphore semaphore(String name, int permits, LockOptions lockOptions) {
    ensureOpen();
    abilities.permitStore(); // refused now, not at the first acquisition
    return new NamedSemaphore(semaphores, name, permits, lockOptions);
  }

  /** This client's side of its semaphores, for a deferred client's semaphores too. */
  SemaphoreHost semaphores() {
    return semaphores;
  }

  /** Runs {@code task} on the client's event thread (see {@link Notices#tell}). */
  void tell(Runnable task) {
    Notices.tell(events, task);
  }

  @Override
  public List<HeldLeaseInfo> heldLeases() {
    // Every grant this client holds, the one set the renewer renews from too.
    List<HeldLeaseInfo> infos = new ArrayList<>(grants.size());
    for (Grant grant : grants.values()) {
      infos.add(LockEvents.named(grant.info()));
    }
    return infos;
  }

  @Override
  public List<LockInfo> inspect(String namePattern) {
    Objects.requireNonNull(namePattern, "namePattern");
    return BackendCalls.await(
        abilities.administration().inspect(namePattern),
        operationTimeoutNanos,
        "list locks matching '" + namePattern + "'",
        backend.name());
  }

  @Override
  public Optional<LockInfo> forceRelease(String name) {
    LockNames.requireValid(name);
    Optional<LockInfo> before =
        BackendCalls.await(
            abilities.administration().forceRelease(name),
            operationTimeoutNanos,
            "force the release of '" + name + "'",
            backend.name());
    signalLocalWaiters(name);
    return before;
  }

  MonotonicClock clock() {
    return clock;
  }

  LeaseRenewer renewer() {
    return renewer;
  }

  long operationTimeoutNanos() {
    return operationTimeoutNanos;
  }

  /** The number of leases the renewer watches (package-private: for this package's tests). */
  int renewedLeaseCount() {
    return renewer.size();
  }

  LockEvents lockEvents() {
    return lockEvents;
  }

  CompletableFuture<Void> releaseQuietly(String name, LockOwner owner, long fencingToken) {
    return undoGrant(name, owner, fencingToken);
  }

  /**
   * Releases a grant nobody will use, without blocking; wakes local waiters when it is freed.
   *
   * @return completes (never exceptionally) when the server answered or the release failed
   */
  CompletableFuture<Void> undoGrant(String name, LockOwner owner, long fencingToken) {
    CompletableFuture<ReleaseResult> released;
    try {
      released = backend.release(name, owner, fencingToken);
    } catch (RuntimeException e) {
      released = CompletableFuture.failedFuture(e);
    }
    return released.handle(
        (result, error) -> {
          if (error != null) {
            log.warn(
                "A hold of '{}' that nobody uses could not be released on the server; it expires"
                    + " after its lease: {}",
                name,
                error.toString());
          } else if (result == ReleaseResult.RELEASED) {
            signalLocalWaiters(name);
          }
          return null;
        });
  }

  // ---- acquisition (Acquisitions) ------------------------------------------------------------

  /**
   * Acquires for {@code holder}, waiting up to {@code waitNanos} (0: one attempt).
   *
   * @return the lease, or null if the lock is held by another owner and the wait is zero
   */
  @Nullable Lease acquire(String name, LockOptions lockOptions, long waitNanos, Object holder) {
    blockingCalls.enter(); // before the acquisition's first look at closed: close() waits for it
    try {
      return blocking.acquire(name, lockOptions, waitNanos, holder);
    } finally {
      blockingCalls.exit();
    }
  }

  LockTimeoutException timeout(String name, long waitNanos) {
    return acquisitions.timeout(name, waitNanos);
  }

  ConcurrentHashMap<GrantKey, Grant> grants() {
    return grants;
  }

  // ---- release and bookkeeping ----------------------------------------------------------------

  ReleaseResult releaseOnBackend(String name, LockOwner owner, long fencingToken, Duration lease) {
    blockingCalls.enter(); // close() waits for a release in flight before it closes the backend
    try {
      return BackendCalls.await(
          backend.release(name, owner, fencingToken),
          operationTimeoutNanos,
          "release '" + name + "'",
          backend.name());
    } catch (BackendUnavailableException e) {
      throw new BackendUnavailableException(
          "Release of lock '"
              + name
              + "' was not confirmed by the "
              + backend.name()
              + " backend; it is no longer renewed and expires on the server within its lease ("
              + lease
              + "): "
              + e.getMessage(),
          e);
    } finally {
      blockingCalls.exit();
    }
  }

  void forget(Grant grant) {
    grants.remove(grant.key(), grant);
  }

  void signalLocalWaiters(String name) {
    waiters.signal(name);
  }

  @Nullable Grant grantOf(GrantKey key) {
    return grants.get(key);
  }

  /** Tells the client's event listener of a lost grant (on the listener's own thread). */
  void reportLost(LeaseLostEvent event) {
    lockEvents.lost(event);
  }

  void dispatch(Consumer<LeaseLostEvent> listener, LeaseLostEvent event) {
    Runnable tell =
        () -> {
          try {
            listener.accept(event);
          } catch (RuntimeException e) {
            log.error("A lost-lease listener of lock '{}' failed", event.lockName(), e);
          }
        };
    try {
      events.execute(tell);
    } catch (RejectedExecutionException e) {
      // The client is closed (its event thread stopped): a listener registered on a lease that
      // close() ended is told here, on the registering thread, rather than never.
      tell.run();
    } catch (RuntimeException e) {
      log.warn(
          "Could not tell a listener that lock '{}' was lost: {}", event.lockName(), e.toString());
    }
  }

  CompletableFuture<Lease> acquireAsync(String name, LockOptions lockOptions, long waitNanos) {
    ensureOpen();
    AsyncAcquisition acquisition =
        new AsyncAcquisition(
            this,
            acquisitions,
            name,
            lockOptions,
            waitNanos,
            asyncSteps,
            asyncCallbacks,
            scheduler);
    pendingAsync.add(acquisition);
    acquisition.whenComplete((lease, failure) -> pendingAsync.remove(acquisition));
    if (closed.get()) {
      acquisition.abortForClose(); // close() may have missed it
    }
    acquisition.start();
    return acquisition;
  }

  void ensureOpen() {
    if (closed.get()) {
      throw closedError(null);
    }
  }

  /**
   * {@code failure}, or, once the client is closed, the closed client's error with it as the cause:
   * a call in flight that close() broke (its backend closed under it) failed for the close.
   */
  RuntimeException failureOrClosed(RuntimeException failure) {
    return closed.get() && !(failure instanceof IllegalStateException)
        ? closedError(failure)
        : failure;
  }

  /**
   * Hands {@code lease}, just granted, to its caller only if the client is still open. Granted
   * while close() ran: close() marks the client closed before it copies the grants to release them,
   * so a thread that sees the mark cannot know whether the copy has its grant; it releases the
   * lease itself (a second release is a no-op) and hands out nothing.
   *
   * @throws IllegalStateException if the client is closed
   */
  void ensureOpenFor(String lockName, Lease lease) {
    if (!closed.get()) {
      return;
    }
    try {
      lease.release();
    } catch (RuntimeException e) {
      log.warn(
          "Lock '{}' was granted while the client closed and could not be released ({}); it"
              + " expires on the server within its lease",
          lockName,
          e.getMessage());
    }
    throw closedError(null);
  }

  private static IllegalStateException closedError(@Nullable Throwable cause) {
    return new IllegalStateException("The lock client is closed", cause);
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (AsyncAcquisition acquisition : List.copyOf(pendingAsync)) {
      acquisition.abortForClose(); // first: an acquisition still running could grant anew
    }
    // Threads waiting in acquire() end with IllegalStateException now, not at their wait's end.
    acquisitions.wakeWaitersForClose();
    // A thread whose backend call is in flight ends when it is answered, and gives back a grant
    // it was answered with itself (ensureOpenFor): wait for it while the backend is still open,
    // for its attempt and its release at most. Without the wait, the backend closed under it: the
    // server granted, the answer was dropped, and no release could be sent (found by review).
    int stillInside = blockingCalls.awaitOthers(operationTimeoutNanos * 2);
    if (stillInside > 0) {
      log.warn(
          "{} acquisition(s) still waiting for the backend after {} ms; closing it under them (a"
              + " grant they are answered with expires on the server within its lease)",
          stillInside,
          TimeUnit.NANOSECONDS.toMillis(operationTimeoutNanos * 2));
    }
    for (Grant grant : List.copyOf(grants.values())) {
      GrantClose.endHolds(grant, this);
      forget(grant);
    }
    // Releases that holders started meanwhile (one of them may have ended a grant above): the
    // backend must stay open for their answers.
    blockingCalls.awaitOthers(operationTimeoutNanos * 2);
    stopThreads();
    try {
      // Steps still running end their acquisitions (a grant they get is released) before the
      // backend closes; bounded, as each step waits at most for one backend call.
      asyncSteps.awaitTermination(operationTimeoutNanos * 2, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    backend.close();
  }

  private void stopThreads() {
    asyncSteps.shutdown(); // steps already queued still run: each ends its acquisition
    asyncCallbacks.shutdown(); // a future completed from now on completes on the step's thread
    scheduler.shutdownNow();
    events.shutdown();
    if (Thread.currentThread() != eventsThread) { // a lost-lease callback may close the client
      try {
        events.awaitTermination(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    lockEvents.close();
  }
}
