package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
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
 * The steps of one client's acquisitions: the attempt, joining the waiters and the wait for release
 * signals (or backoff, or the holder's lease end), the attempts after it, and what becomes of an
 * answer that arrives after its caller gave up; over the SPI's primitives. A grant becomes the
 * client's through {@link GrantRegistration}. The loops that run these steps are {@link
 * BlockingAcquisition} (the calling thread) and {@link AsyncAcquisition}.
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
  private final GrantRegistration registration;

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
    this.registration =
        new GrantRegistration(
            client, backend.name(), clock, operationTimeoutNanos, sessionEvents, renewer);
  }

  /** A lease on a grant that this holder has already (reentry, no server call), or null. */
  @Nullable Lease reenter(GrantKey key, LockOptions lockOptions, long startedAt) {
    if (lockOptions.ownerId().isPresent()) {
      return null; // the server counts owner-id holds
    }
    Grant existing = client.grants().get(key);
    if (existing == null) {
      return null;
    }
    Lease reentered = existing.open();
    lockEvents.acquired(key.lockName(), reentered.fencingToken(), startedAt, 0);
    return reentered;
  }

  /** A new acquisition with a fresh owner (or the caller's owner id) and its deadline. */
  Acquisition begin(GrantKey key, LockOptions lockOptions, long waitNanos, long startedAt) {
    Acquisition a = new Acquisition(clock, key, lockOptions, waitNanos, startedAt);
    registration.enter(a.name); // before anything is sent; end() exits
    return a;
  }

  /**
   * The first attempt failed and the caller waits: joins the local waiters of the lock (watching
   * its release signal).
   *
   * @param onSignal null for the calling thread (which parks), else what wakes an asynchronous
   *     acquisition; it must not block
   */
  void startWaiting(Acquisition a, @Nullable Runnable onSignal) {
    a.waitStartedAt = clock.nanoTime() | 1; // never 0, which means "did not wait"
    lockEvents.waiting(a.name);
    a.backoff = signalsReleases ? null : new RetryBackoff();
    a.waiter = waiters.join(a.name, a.owner, onSignal);
  }

  /** One attempt after a wait. A signal that arrives during it forces another. */
  @Nullable Lease retry(Acquisition a) {
    a.waiter.clearSignal();
    return attempt(a, false);
  }

  /**
   * How long to wait for a release signal before the next attempt: at most until the deadline, the
   * next backoff step (a backend without signals), or the holder's lease end (a crashed holder
   * sends no signal).
   *
   * @throws LockTimeoutException if the deadline has passed
   */
  long nextWaitNanos(Acquisition a) {
    long left = a.deadline.remainingNanos();
    if (left <= 0) {
      throw timeout(a.name, a.waitNanos);
    }
    long park = left;
    if (a.backoff != null) {
      park = Math.min(park, a.backoff.nextNanos());
    }
    Duration holderRemaining = a.holderRemaining;
    if (holderRemaining != null) {
      park = Math.min(park, holderRemaining.toNanos() + 1_000_000L);
    }
    return park;
  }

  /**
   * After a wait: a wait that ended at the deadline without a signal is a timeout (a signal still
   * earns one more attempt).
   */
  void afterWait(Acquisition a) {
    if (a.deadline.passed() && !a.signalled()) {
      throw timeout(a.name, a.waitNanos);
    }
  }

  /** Reports a lease acquired (no-op for null). */
  void acquired(Acquisition a, @Nullable Lease lease) {
    if (lease != null) {
      lockEvents.acquired(a.name, lease.fencingToken(), a.startedAt, a.waitStartedAt);
    }
  }

  /**
   * Ends the acquisition: leaves the waiters (passing a signal on if it leaves without the lease)
   * and, without a lease, tells a wait-queue backend that this owner no longer waits.
   */
  void end(Acquisition a, @Nullable Lease lease) {
    registration.exit(a.name); // no answer of this acquisition is registered after end()
    try {
      ReleaseWaiters.Waiter w = a.waiter;
      if (w != null) {
        waiters.leave(w, lease != null);
      }
      if (lease == null) {
        abandon(a.name, a.owner);
      }
    } finally {
      // Last, so that a listener that throws (only a VirtualMachineError gets through) never
      // keeps the acquisition from leaving the waiters.
      if (a.waitStartedAt != 0) {
        lockEvents.waitEnded(a.name, a.waitStartedAt);
      }
    }
  }

  /** Wakes every thread waiting for a lock of this client, which is closing. */
  void wakeWaitersForClose() {
    waiters.wakeThreadsForClose();
  }

  /** Waits (bounded) until the release signal of the lock is watched. */
  void awaitWatching(Acquisition a) {
    try {
      BackendCalls.awaitInterruptibly(
          a.waiter.watching(),
          Math.min(a.deadline.remainingNanos(), operationTimeoutNanos),
          "watch releases of '" + a.name + "'",
          backend.name());
    } catch (InterruptedException e) {
      throw interrupted(a.name);
    } catch (BackendUnavailableException e) {
      if (a.deadline.passed()) {
        throw timeout(a.name, 0);
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
  @Nullable Lease attempt(Acquisition a, boolean single) {
    GrantKey key = a.key;
    String name = a.name;
    LockOwner owner = a.owner;
    LockOptions lockOptions = a.lockOptions;
    Deadline deadline = a.deadline;
    long timeout =
        single
            ? (a.askedAgainAfterStaleGrant ? a.askAgainWithinNanos : operationTimeoutNanos)
            : Math.min(operationTimeoutNanos, deadline.remainingNanos());
    if (timeout <= 0) {
      throw timeout(name, 0);
    }
    long sentAtRealNanos = System.nanoTime(); // the answer's wait is measured in real time
    SessionEvents.Request request = sessionEvents.sending(name, owner);
    boolean registering = false;
    try {
      long sentAt = clock.nanoTime();
      long sentAtRaise = registration.position();
      CompletableFuture<AcquireResult> answer;
      try {
        answer = backend.tryAcquire(name, owner, lockOptions.leaseTime());
      } catch (RuntimeException e) {
        throw BackendCalls.translate(e, "acquire '" + name + "'", backend.name());
      }
      AcquireResult result = awaitAnswer(answer, name, owner, timeout, deadline, single);
      if (result instanceof AcquireResult.Granted granted) {
        a.holderRemaining = null;
        registering = true;
        Lease lease;
        try {
          lease =
              registration.register(key, owner, lockOptions, granted, sentAt, sentAtRaise, request);
        } catch (GrantRegistration.StaleGrantException e) {
          // The lock was granted anew after this request was sent, so its grant has ended (and
          // was given back). Waiting: ask again at once. One attempt (tryAcquire, and the
          // starter's first try before it waits) asks once more at once, where an owner id
          // re-enters its newer grant; stale again, the lock is held as far as it can tell. It
          // threw before, a BackendUnavailableException from a server that answered: seen under
          // contention on H2, whose tokens do not follow its grants, failing a @Locked call.
          // Within what is left of this attempt's operation timeout: a call is bounded by one.
          a.holderRemaining = Duration.ZERO;
          long left = timeout - (System.nanoTime() - sentAtRealNanos);
          if (single && !a.askedAgainAfterStaleGrant && left > 0) {
            a.askedAgainAfterStaleGrant = true;
            a.askAgainWithinNanos = left;
            return attempt(a, true);
          }
          return null;
        }
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
        a.holderRemaining = Duration.ZERO; // try again at once, in the new session
        return null;
      }
      a.holderRemaining = ((AcquireResult.Held) result).holderRemaining();
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
      if (!single && timeout < operationTimeoutNanos && deadline.passed()) {
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
