package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockEventListener;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.WaitQueue;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquisitions of one client: the first attempt, the wait for release signals (or backoff, or
 * the holder's lease end) and the attempts after it, and what becomes of an answer that arrives
 * after its caller gave up. The loop of Curator's {@code LockInternals}, over the SPI's primitives;
 * the grants it registers are the client's.
 */
final class Acquisitions {
  private static final Logger log = LoggerFactory.getLogger(Acquisitions.class);

  private final CoreLockClient client;
  private final LockBackend backend;
  private final MonotonicClock clock;
  private final long operationTimeoutNanos;
  private final ReleaseWaiters waiters;
  private final boolean signalsReleases;
  private final @Nullable WaitQueue waitQueue;
  private final SessionEvents sessionEvents;
  private final LockEvents lockEvents;
  private final LeaseRenewer renewer;

  /** The holder's remaining lease seen by this thread's last failed attempt. */
  private final ThreadLocal<@Nullable Duration> lastHolderRemaining = new ThreadLocal<>();

  Acquisitions(
      CoreLockClient client,
      LockBackend backend,
      MonotonicClock clock,
      long operationTimeoutNanos,
      ReleaseWaiters waiters,
      boolean signalsReleases,
      @Nullable WaitQueue waitQueue,
      SessionEvents sessionEvents,
      LockEvents lockEvents,
      LeaseRenewer renewer) {
    this.client = client;
    this.backend = backend;
    this.clock = clock;
    this.operationTimeoutNanos = operationTimeoutNanos;
    this.waiters = waiters;
    this.signalsReleases = signalsReleases;
    this.waitQueue = waitQueue;
    this.sessionEvents = sessionEvents;
    this.lockEvents = lockEvents;
    this.renewer = renewer;
  }

  /**
   * Acquires for {@code holder}, waiting up to {@code waitNanos} (0: one attempt).
   *
   * @return the lease, or null if the lock is held by another owner and the wait is zero
   */
  @Nullable Lease acquire(String name, LockOptions lockOptions, long waitNanos, Object holder) {
    long startedAt = clock.nanoTime();
    try {
      Lease lease = acquireOrWait(name, lockOptions, waitNanos, holder, startedAt);
      if (lease == null) {
        lockEvents.notAcquired(name, LockEventListener.AcquireFailure.TIMEOUT, startedAt);
      }
      return lease;
    } catch (RuntimeException e) {
      lockEvents.notAcquired(name, LockEvents.failureOf(e), startedAt);
      throw e;
    }
  }

  private @Nullable Lease acquireOrWait(
      String name, LockOptions lockOptions, long waitNanos, Object holder, long startedAt) {
    client.ensureOpen();
    if (waitNanos > 0 && Thread.currentThread().isInterrupted()) {
      throw interrupted(name);
    }
    GrantKey key = GrantKey.of(name, lockOptions, holder);
    if (lockOptions.ownerId().isEmpty()) {
      Grant existing = client.grants().get(key);
      if (existing != null) {
        Lease reentered = existing.open();
        lockEvents.acquired(name, reentered.fencingToken(), startedAt, 0);
        return reentered;
      }
    }
    LockOwner owner = lockOptions.ownerId().map(LockOwner::ofOwnerId).orElseGet(OwnerTokens::next);
    Deadline deadline = Deadline.after(clock, Duration.ofNanos(waitNanos));

    Lease lease = null;
    long waitStartedAt = 0;
    try {
      lease = attempt(key, owner, lockOptions, deadline, waitNanos == 0);
      if (lease == null && waitNanos > 0) {
        waitStartedAt = clock.nanoTime() | 1; // never 0, which means "did not wait"
        lockEvents.waiting(name);
        lease = await(key, owner, lockOptions, deadline, waitNanos);
      }
      if (lease != null) {
        lockEvents.acquired(name, lease.fencingToken(), startedAt, waitStartedAt);
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
      GrantKey key, LockOwner owner, LockOptions lockOptions, Deadline deadline, long waitNanos) {
    String name = key.lockName();
    Lease lease;
    RetryBackoff backoff = signalsReleases ? null : new RetryBackoff();
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
  private void abandon(String name, LockOwner owner) {
    if (waitQueue == null) {
      return;
    }
    CompletableFuture<Void> done;
    try {
      done = waitQueue.abandon(name, owner);
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
      GrantKey key, LockOwner owner, LockOptions lockOptions, Deadline deadline, boolean single) {
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
      LockOwner owner,
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
      CompletableFuture<AcquireResult> answer, String name, LockOwner owner, boolean waitForIt) {
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
            client.signalLocalWaiters(name);
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
            client.undoGrant(name, owner, granted.fencingToken());
          }
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
      LockOwner owner,
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
      grant.handedOut(); // from now on its loss is the listener's news (not before: see there)
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
      LockOwner owner,
      LockOptions lockOptions,
      AcquireResult.Granted granted,
      long sentAt) {
    String name = key.lockName();
    Grant fresh = new Grant(client, key, owner, granted.fencingToken(), lockOptions, sentAt);
    if (!fresh.isValid()) {
      // The answer took longer than the lease: the server may already have let it go.
      client.undoGrant(name, owner, granted.fencingToken());
      throw new BackendUnavailableException(
          "The grant of lock '"
              + name
              + "' arrived after its lease of "
              + lockOptions.leaseTime()
              + " had run out; it was released");
    }
    if (lockOptions.ownerId().isEmpty()) {
      LeaseHandle handle = fresh.open();
      client.grants().put(key, fresh);
      renewer.add(fresh);
      return handle;
    }
    // With an owner id the server counted this hold: add it to this client's grant with the same
    // fencing token, or start a new grant.
    LeaseHandle[] opened = new LeaseHandle[1];
    Grant[] replaced = new Grant[1];
    Grant current =
        client
            .grants()
            .compute(
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
}
