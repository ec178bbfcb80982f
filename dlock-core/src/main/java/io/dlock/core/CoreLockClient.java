package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.HeldLeaseInfo;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockInfo;
import io.dlock.LockInterruptedException;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
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
  private final ExecutorService asyncAcquirers;
  private final LeaseRenewer renewer;
  private final SessionEvents sessionEvents;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** The holder's remaining lease seen by this thread's last failed attempt. */
  private final ThreadLocal<@Nullable Duration> lastHolderRemaining = new ThreadLocal<>();

  private CoreLockClient(LockBackend backend, LockClientOptions options) {
    this.backend = backend;
    this.options = options;
    this.clock = options.clock();
    this.operationTimeoutNanos = options.operationTimeout().toNanos();
    int id = CLIENT_IDS.incrementAndGet();
    ScheduledThreadPoolExecutor stpe =
        new ScheduledThreadPoolExecutor(1, daemonThreads("dlock-" + id + "-renewer"));
    stpe.setRemoveOnCancelPolicy(true);
    this.scheduler = stpe;
    this.events = Executors.newSingleThreadExecutor(daemonThreads("dlock-" + id + "-events"));
    this.asyncAcquirers = AsyncExecutors.create("dlock-" + id + "-acquire");
    this.waiters = new ReleaseWaiters(backend);
    this.renewer = new LeaseRenewer(backend, clock, options.operationTimeout(), scheduler);
    this.sessionEvents = new SessionEvents(backend.name(), grants.values());
    backend.bindEvents(sessionEvents);
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
  public List<HeldLeaseInfo> heldLeases() {
    List<HeldLeaseInfo> infos = new ArrayList<>();
    for (Grant grant : grants.values()) {
      infos.add(grant.info());
    }
    return infos;
  }

  @Override
  public List<LockInfo> inspect(String namePattern) {
    Objects.requireNonNull(namePattern, "namePattern");
    return BackendCalls.await(
        backend.inspect(namePattern),
        operationTimeoutNanos,
        "list locks matching '" + namePattern + "'",
        backend.name());
  }

  @Override
  public Optional<LockInfo> forceRelease(String name) {
    LockNames.requireValid(name);
    Optional<LockInfo> before =
        BackendCalls.await(
            backend.forceRelease(name),
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

  /** The number of leases the renewer watches; for tests. */
  public int renewedLeaseCount() {
    return renewer.size();
  }

  // ---- acquisition ----------------------------------------------------------------------------

  /**
   * Acquires for {@code holder}, waiting up to {@code waitNanos} (0: one attempt).
   *
   * @return the lease, or null if the lock is held by another owner and the wait is zero
   */
  @Nullable Lease acquire(String name, LockOptions lockOptions, long waitNanos, Object holder) {
    ensureOpen();
    if (waitNanos > 0 && Thread.currentThread().isInterrupted()) {
      throw interrupted(name);
    }
    GrantKey key = GrantKey.of(name, lockOptions, holder);
    if (lockOptions.ownerId().isEmpty()) {
      Grant existing = grants.get(key);
      if (existing != null) {
        return existing.open();
      }
    }
    String owner = lockOptions.ownerId().map(id -> "o:" + id).orElseGet(OwnerTokens::next);
    Deadline deadline = Deadline.after(clock, Duration.ofNanos(waitNanos));

    Lease lease = null;
    try {
      lease = attempt(key, owner, lockOptions, deadline, waitNanos == 0);
      if (lease == null && waitNanos > 0) {
        lease = await(key, owner, lockOptions, deadline, waitNanos);
      }
      return lease;
    } finally {
      if (lease == null) {
        abandon(name, owner);
      }
    }
  }

  /** Waits for release signals (or backoff, or the holder's lease end) and tries again. */
  private Lease await(
      GrantKey key, String owner, LockOptions lockOptions, Deadline deadline, long waitNanos) {
    String name = key.lockName();
    Lease lease;
    RetryBackoff backoff = backend.signalsReleases() ? null : new RetryBackoff();
    ReleaseWaiters.Waiter waiter = waiters.join(name, owner);
    boolean acquired = false;
    try {
      awaitWatching(waiter, name, deadline);
      while (true) {
        waiter.clearSignal();
        lease = attempt(key, owner, lockOptions, deadline, false);
        if (lease != null) {
          acquired = true;
          return lease;
        }
        long left = deadline.remainingNanos();
        if (left <= 0) {
          throw timeout(name, waitNanos);
        }
        long park = left;
        if (backoff != null) {
          park = Math.min(park, backoff.nextNanos());
        }
        Duration holderRemaining = lastHolderRemaining.get();
        if (holderRemaining != null) {
          // The holder's lease may run out without a release signal (crashed holder): retry then.
          park = Math.min(park, holderRemaining.toNanos() + 1_000_000L);
        }
        if (!waiter.signalled && !waiter.await(park)) {
          throw interrupted(name);
        }
        if (deadline.passed() && !waiter.signalled) {
          throw timeout(name, waitNanos);
        }
      }
    } finally {
      lastHolderRemaining.remove();
      waiters.leave(waiter, acquired);
    }
  }

  private void awaitWatching(ReleaseWaiters.Waiter waiter, String name, Deadline deadline) {
    try {
      BackendCalls.awaitInterruptibly(
          waiter.watching(),
          Math.min(deadline.remainingNanos(), operationTimeoutNanos),
          "watch releases of '" + name + "'",
          backend.name());
    } catch (InterruptedException e) {
      throw interrupted(name);
    } catch (BackendUnavailableException e) {
      if (deadline.passed()) {
        throw timeout(name, 0);
      }
      throw e;
    }
  }

  /** Tells the backend that this owner's wait ended without a grant; waits for it, bounded. */
  private void abandon(String name, String owner) {
    CompletableFuture<Void> done;
    try {
      done = backend.abandon(name, owner);
    } catch (RuntimeException e) {
      log.warn("Could not abandon the wait for '{}': {}", name, e.toString());
      return;
    }
    if (done.isDone()) {
      return;
    }
    try {
      BackendCalls.await(
          done, operationTimeoutNanos, "abandon wait for '" + name + "'", backend.name());
    } catch (RuntimeException e) {
      log.warn("Could not abandon the wait for '{}': {}", name, e.getMessage());
    }
  }

  /**
   * One bounded attempt. An answer that arrives after the caller gave up (timeout, interrupt) is
   * released, so that a lost answer never leaves a lock held by nobody.
   */
  private @Nullable Lease attempt(
      GrantKey key, String owner, LockOptions lockOptions, Deadline deadline, boolean single) {
    String name = key.lockName();
    long timeout =
        single ? operationTimeoutNanos : Math.min(operationTimeoutNanos, deadline.remainingNanos());
    if (timeout <= 0) {
      throw timeout(name, 0);
    }
    SessionEvents.Request request = sessionEvents.sending(name, owner);
    boolean registering = false;
    try {
      long sentAt = clock.nanoTime();
      CompletableFuture<AcquireResult> answer;
      try {
        answer = backend.tryAcquire(name, owner, lockOptions.leaseTime());
      } catch (RuntimeException e) {
        throw BackendCalls.translate(e, "acquire '" + name + "'", backend.name());
      }
      AcquireResult result = awaitAnswer(answer, name, owner, timeout, deadline, single);
      if (result instanceof AcquireResult.Granted granted) {
        lastHolderRemaining.remove();
        registering = true;
        Lease lease = register(key, owner, lockOptions, granted, sentAt, request);
        if (lease != null) {
          return lease;
        }
        // The session was lost while the request was in flight: the grant was undone.
        if (single) {
          throw new BackendUnavailableException(
              "The "
                  + backend.name()
                  + " backend's session was lost while acquiring lock '"
                  + name
                  + "'; nothing is held");
        }
        lastHolderRemaining.set(Duration.ZERO); // try again at once, in the new session
        return null;
      }
      lastHolderRemaining.set(((AcquireResult.Held) result).holderRemaining());
      return null;
    } finally {
      if (!registering) {
        sessionEvents.ended(request);
      }
    }
  }

  private AcquireResult awaitAnswer(
      CompletableFuture<AcquireResult> answer,
      String name,
      String owner,
      long timeout,
      Deadline deadline,
      boolean single) {
    try {
      return single
          // One attempt without waiting (tryAcquire, Lock.tryLock) ignores interrupts, as
          // Lock.tryLock() does; the interrupt flag stays as it was.
          ? BackendCalls.await(answer, timeout, "acquire '" + name + "'", backend.name())
          : BackendCalls.awaitInterruptibly(
              answer, timeout, "acquire '" + name + "'", backend.name());
    } catch (InterruptedException e) {
      // Wait for the answer we already asked for, so that nothing stays held when we throw.
      settleAbandoned(answer, name, owner, true);
      Thread.currentThread().interrupt();
      throw interrupted(name);
    } catch (BackendUnavailableException e) {
      settleAbandoned(answer, name, owner, false);
      if (timeout < operationTimeoutNanos && deadline.passed()) {
        // The caller's wait ran out while the backend was still answering: that is a timeout.
        throw timeout(name, 0);
      }
      throw e;
    }
  }

  private void settleAbandoned(
      CompletableFuture<AcquireResult> answer, String name, String owner, boolean waitForIt) {
    if (waitForIt) {
      try {
        AcquireResult result =
            BackendCalls.await(
                answer, operationTimeoutNanos, "acquire '" + name + "'", backend.name());
        if (result instanceof AcquireResult.Granted granted) {
          ReleaseResult released =
              BackendCalls.await(
                  backend.release(name, owner, granted.fencingToken()),
                  operationTimeoutNanos,
                  "release abandoned grant of '" + name + "'",
                  backend.name());
          if (released == ReleaseResult.RELEASED) {
            signalLocalWaiters(name);
          }
        }
        return;
      } catch (RuntimeException e) {
        // Fall through: settle when (if ever) the answer arrives.
      }
    }
    answer.thenAccept(
        result -> {
          if (result instanceof AcquireResult.Granted granted) {
            undoGrant(name, owner, granted.fencingToken());
          }
        });
  }

  /** Releases a hold of a lost lease on the server, without blocking and without failing. */
  CompletableFuture<Void> releaseQuietly(String name, String owner, long fencingToken) {
    return undoGrant(name, owner, fencingToken);
  }

  /**
   * Releases a grant nobody will use, without blocking; wakes local waiters when it is freed.
   *
   * @return completes (never exceptionally) when the server answered or the release failed
   */
  private CompletableFuture<Void> undoGrant(String name, String owner, long fencingToken) {
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

  /**
   * Registers a grant, then applies the session events its request saw in flight.
   *
   * @return the lease, or null if the session was lost while the request was in flight (the grant
   *     is then released again: it may belong to a session that no longer exists)
   */
  private @Nullable Lease register(
      GrantKey key,
      String owner,
      LockOptions lockOptions,
      AcquireResult.Granted granted,
      long sentAt,
      SessionEvents.Request request) {
    LeaseHandle handle;
    try {
      handle = registerGrant(key, owner, lockOptions, granted, sentAt);
    } catch (RuntimeException e) {
      sessionEvents.ended(request);
      throw e;
    }
    Grant grant = handle.grant();
    if (sessionEvents.registered(request, grant)) {
      return handle;
    }
    handle.release(); // the grant is lost: frees this hold on the server, owner- and token-checked
    // A waiting acquisition tries again with the same owner: let the release of the lost grant be
    // answered first (bounded), or the retry could meet that grant still on the server, be handed
    // it (same owner), and then lose it to the release queued before.
    CompletableFuture<Void> cleanup = grant.pendingCleanup();
    if (cleanup != null) {
      try {
        BackendCalls.await(
            cleanup,
            operationTimeoutNanos,
            "release lost grant of '" + key.lockName() + "'",
            backend.name());
      } catch (RuntimeException e) {
        // Not answered in time: the attempt after this one fails or waits as the backend does.
      }
    }
    return null;
  }

  private LeaseHandle registerGrant(
      GrantKey key,
      String owner,
      LockOptions lockOptions,
      AcquireResult.Granted granted,
      long sentAt) {
    String name = key.lockName();
    Grant fresh = new Grant(this, key, owner, granted.fencingToken(), lockOptions, sentAt);
    if (!fresh.isValid()) {
      // The answer took longer than the lease: the server may already have let it go.
      undoGrant(name, owner, granted.fencingToken());
      throw new BackendUnavailableException(
          "The grant of lock '"
              + name
              + "' arrived after its lease of "
              + lockOptions.leaseTime()
              + " had run out; it was released");
    }
    if (lockOptions.ownerId().isEmpty()) {
      LeaseHandle handle = fresh.open();
      grants.put(key, fresh);
      renewer.add(fresh);
      return handle;
    }
    // With an owner id the server counted this hold: add it to this client's grant with the same
    // fencing token, or start a new grant.
    LeaseHandle[] opened = new LeaseHandle[1];
    Grant[] replaced = new Grant[1];
    Grant current =
        grants.compute(
            key,
            (k, existing) -> {
              if (existing != null && existing.fencingToken() == granted.fencingToken()) {
                opened[0] = existing.openCounted(sentAt);
                if (opened[0] != null) {
                  return existing;
                }
              }
              replaced[0] = existing;
              opened[0] = fresh.open();
              return fresh;
            });
    if (replaced[0] != null) {
      replaced[0].markLost(
          LeaseLostEvent.Reason.TAKEN_OVER,
          "the lock was granted anew with fencing token " + granted.fencingToken());
    }
    if (current == fresh) {
      renewer.add(fresh);
    }
    return opened[0];
  }

  // ---- release and bookkeeping ----------------------------------------------------------------

  ReleaseResult releaseOnBackend(String name, String owner, long fencingToken, Duration lease) {
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
    }
  }

  void forget(Grant grant) {
    grants.remove(grant.key(), grant);
    renewer.remove(grant);
  }

  void signalLocalWaiters(String name) {
    waiters.signal(name);
  }

  @Nullable Grant grantOf(GrantKey key) {
    return grants.get(key);
  }

  void dispatch(Consumer<LeaseLostEvent> listener, LeaseLostEvent event) {
    try {
      events.execute(
          () -> {
            try {
              listener.accept(event);
            } catch (RuntimeException e) {
              log.error("A lost-lease listener of lock '{}' failed", event.lockName(), e);
            }
          });
    } catch (RuntimeException e) {
      log.warn(
          "Could not tell a listener that lock '{}' was lost: {}", event.lockName(), e.toString());
    }
  }

  CompletableFuture<Lease> acquireAsync(String name, LockOptions lockOptions, long waitNanos) {
    ensureOpen();
    CancellableAcquisition future = new CancellableAcquisition();
    Object holder = new Object();
    try {
      future.task =
          asyncAcquirers.submit(
              () -> {
                try {
                  Lease lease = acquire(name, lockOptions, waitNanos, holder);
                  if (lease == null) {
                    future.completeExceptionally(timeout(name, waitNanos));
                  } else if (!future.complete(lease)) {
                    lease.release();
                  }
                } catch (RuntimeException e) {
                  future.completeExceptionally(e);
                }
              });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      future.completeExceptionally(new IllegalStateException("The lock client is closed", e));
    }
    if (future.isCancelled() && future.task != null) {
      future.task.cancel(true);
    }
    return future;
  }

  LockTimeoutException timeout(String name, long waitNanos) {
    return new LockTimeoutException(
        "Lock '"
            + name
            + "' was not acquired within "
            + (waitNanos > 0 ? Duration.ofNanos(waitNanos) : "the wait")
            + ": another holder kept it");
  }

  LockInterruptedException interrupted(String name) {
    Thread.currentThread().interrupt();
    return new LockInterruptedException(
        "Interrupted while acquiring lock '" + name + "'; nothing is held");
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("The lock client is closed");
    }
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Grant grant : List.copyOf(grants.values())) {
      LeaseHandle handle;
      while ((handle = grant.lastOpenHandle()) != null) {
        try {
          handle.release();
        } catch (RuntimeException e) {
          log.warn("Lock '{}' not released at close: {}", grant.lockName(), e.getMessage());
        }
      }
      forget(grant);
    }
    asyncAcquirers.shutdownNow();
    scheduler.shutdownNow();
    events.shutdown();
    try {
      events.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    backend.close();
  }

  static java.util.concurrent.ThreadFactory daemonThreads(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }

  /** A future whose cancellation interrupts the acquisition behind it. */
  private static final class CancellableAcquisition extends CompletableFuture<Lease> {
    volatile java.util.concurrent.@Nullable Future<?> task;

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      java.util.concurrent.Future<?> t = task;
      if (cancelled && t != null) {
        t.cancel(true);
      }
      return cancelled;
    }
  }
}
