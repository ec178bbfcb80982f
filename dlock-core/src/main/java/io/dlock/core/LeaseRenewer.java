package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockLostException;
import io.dlock.MonotonicClock;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One scheduler per client that renews all of the client's renewable leases in one batched backend
 * call per tick, and marks lost every lease the backend reports gone or that runs out before a
 * renewal gets through. Fixed leases are watched only for their end.
 *
 * <p>A tick renews, in one call per lease length, every lease due within a sixth of its lease time
 * and every lease that would fall due before the next tick: so a client makes one renewal request
 * per tick and length, however many leases it holds and however their due times were spread (the
 * calls and their answers: {@link RenewalCalls}). All ticks and extensions run on one thread, so
 * they never overlap.
 */
final class LeaseRenewer {
  private static final Logger log = LoggerFactory.getLogger(LeaseRenewer.class);

  private final LockBackend backend;
  private final MonotonicClock clock;
  private final Duration operationTimeout;
  private final ScheduledExecutorService scheduler;

  /**
   * The client's grants, a live view: the renewer keeps no set of its own (a client may hold a
   * hundred thousand leases, and a second set costs an entry each). Ended grants in it (lost, not
   * yet released by their holders) are skipped: never renewed, never counted.
   */
  private final Collection<Grant> grants;

  /** The grants' trusted ends, marked lost as they pass, also while a call is waited for. */
  private final LeaseEnds ends;

  private final ReentrantLock scheduleLock = new ReentrantLock();
  private @Nullable ScheduledFuture<?> nextTick;
  private long nextTickAt;
  private boolean tickRunning;
  private long tickSeq;

  /** The renewal calls of the ticks. */
  private final RenewalCalls calls;

  LeaseRenewer(
      LockBackend backend,
      MonotonicClock clock,
      Duration operationTimeout,
      ScheduledExecutorService scheduler,
      LockEvents lockEvents,
      Collection<Grant> grants) {
    this.grants = grants;
    this.ends = new LeaseEnds(grants, clock, backend.name());
    this.backend = backend;
    this.clock = clock;
    this.operationTimeout = operationTimeout;
    this.scheduler = scheduler;
    this.calls = new RenewalCalls(backend, clock, operationTimeout, grants, ends, lockEvents);
  }

  /**
   * A grant was added to the client's grants: makes sure a tick comes no later than it is due. A
   * grant that has already ended (a session event racing with its registration) is never renewed:
   * every tick skips it.
   */
  void add(Grant grant) {
    if (!grant.hasEnded()) {
      scheduleNoLaterThan(dueAt(grant));
    }
  }

  /** The number of grants watched now: those of the client that have not ended. */
  int size() {
    int n = 0;
    for (Grant grant : grants) {
      if (!grant.hasEnded()) {
        n++;
      }
    }
    return n;
  }

  private static long dueAt(Grant grant) {
    return grant.autoRenew() ? grant.nextRenewalNanos() : grant.validUntilNanos();
  }

  private void scheduleNoLaterThan(long at) {
    scheduleLock.lock();
    try {
      if (scheduler.isShutdown()) {
        return;
      }
      if (tickRunning) {
        return; // the running tick schedules the next one, and it sees every grant added by now
      }
      ScheduledFuture<?> current = nextTick;
      if (current != null && !current.isDone() && nextTickAt - at <= 0) {
        return;
      }
      if (current != null) {
        current.cancel(false);
      }
      long seq = ++tickSeq;
      nextTickAt = at;
      long delay = Math.max(0, at - clock.nanoTime());
      nextTick = scheduler.schedule(() -> tick(seq), delay, TimeUnit.NANOSECONDS);
    } finally {
      scheduleLock.unlock();
    }
  }

  private void tick(long seq) {
    scheduleLock.lock();
    try {
      if (seq != tickSeq) {
        return; // superseded by an earlier tick scheduled after this one started: one chain only
      }
      tickRunning = true;
    } finally {
      scheduleLock.unlock();
    }
    try {
      calls.renewDue();
    } catch (RuntimeException e) {
      log.error("Lease renewal tick failed; retrying", e);
    } finally {
      scheduleNext();
    }
  }

  /**
   * Sets {@code grant}'s lease to {@code leaseNanos} from now on the server, on the renewal thread,
   * so that it never overlaps a renewal of the same grant (each answer is then judged against the
   * length it carried). Waits for its turn at most twice the operation timeout (a tick under way is
   * bounded by that); if the turn has not come by then, the extension is withdrawn, never sent, and
   * reported as not done. Once sent, the call is bounded by the operation timeout.
   *
   * @throws LockLostException if the grant was lost before, or the server no longer has it (it is
   *     then marked lost)
   * @throws BackendUnavailableException if the extension was not sent, or not confirmed
   * @throws IllegalStateException if the grant was released, or the client closed
   */
  void extend(Grant grant, long leaseNanos) {
    Extension extension = new Extension(grant, leaseNanos);
    try {
      scheduler.execute(extension::run);
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("The lock client is closed", e);
    }
    if (awaitDone(extension.done, 2 * operationTimeout.toNanos())) {
      outcome(extension.done);
      return;
    }
    if (extension.withdraw()) {
      throw new BackendUnavailableException(
          "Not extended: the extension of the lease of '"
              + grant.lockName()
              + "' did not get its turn within "
              + 2 * operationTimeout.toMillis()
              + " ms (renewals under way held the renewal thread); nothing was sent");
    }
    // Sent meanwhile: the call itself is bounded by the operation timeout, and then answered.
    if (!awaitDone(extension.done, operationTimeout.toNanos() + 1_000_000_000L)) {
      throw new BackendUnavailableException(
          "No answer to the extension of the lease of '" + grant.lockName() + "'");
    }
    outcome(extension.done);
  }

  /** Waits, without reacting to interrupts (the flag is restored), until done or the timeout. */
  private static boolean awaitDone(CompletableFuture<Void> done, long timeoutNanos) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + timeoutNanos;
    try {
      while (true) {
        try {
          done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          return true;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          return true;
        } catch (TimeoutException e) {
          return false;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Returns if the extension was confirmed; throws what it failed with. */
  private static void outcome(CompletableFuture<Void> done) {
    try {
      done.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(cause);
    }
  }

  /** Runs {@code task} on the renewal thread (for tests that need it busy). */
  void runOnRenewalThreadForTest(Runnable task) {
    scheduler.execute(task);
  }

  /** One extension: queued, then sent by the renewal thread, or withdrawn by its caller first. */
  private final class Extension {
    private static final int QUEUED = 0;
    private static final int SENT = 1;
    private static final int WITHDRAWN = 2;

    final Grant grant;
    final long leaseNanos;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    private final AtomicInteger state = new AtomicInteger(QUEUED);

    Extension(Grant grant, long leaseNanos) {
      this.grant = grant;
      this.leaseNanos = leaseNanos;
    }

    /** True if it was withdrawn before the renewal thread took it: it will never be sent. */
    boolean withdraw() {
      return state.compareAndSet(QUEUED, WITHDRAWN);
    }

    void run() {
      if (!state.compareAndSet(QUEUED, SENT)) {
        return; // withdrawn by its caller, who reported it not done
      }
      try {
        extendNow(grant, leaseNanos);
        done.complete(null);
      } catch (RuntimeException e) {
        done.completeExceptionally(e);
      }
    }
  }

  private void extendNow(Grant grant, long leaseNanos) {
    if (!grant.isValid()) {
      LeaseState state = grant.state();
      if (state == LeaseState.UNCERTAIN) {
        throw new BackendUnavailableException(
            "Cannot extend the lease of lock '"
                + grant.lockName()
                + "' now: the backend's session is suspended");
      }
      if (state == LeaseState.RELEASED) {
        throw new IllegalStateException(
            "Cannot extend the lease of lock '" + grant.lockName() + "': it was released");
      }
      throw lostBeforeExtension(grant);
    }
    HeldLease held = grant.heldLease(leaseNanos);
    long sentAt = clock.nanoTime();
    try {
      Set<HeldLease> gone;
      try {
        // Other leases' ends are marked while it waits, as during a renewal (see renew).
        gone =
            ends.await(
                backend.renew(List.of(held)),
                operationTimeout.toNanos(),
                "extend the lease of '" + grant.lockName() + "'");
      } catch (RuntimeException e) {
        grant.unanswered(sentAt, leaseNanos);
        throw e;
      }
      if (gone.contains(held)) {
        grant.markLost(
            LeaseLostEvent.Reason.TAKEN_OVER,
            "an extension found the lock deleted or held by another owner");
        throw lostBeforeExtension(grant);
      }
      if (!grant.extended(sentAt, leaseNanos)) {
        grant.markLost(
            grant.autoRenew() ? LeaseLostEvent.Reason.EXPIRED : LeaseLostEvent.Reason.LEASE_ENDED,
            "the extension was answered after the lease of " + grant.leaseTime() + " ran out");
        throw lostBeforeExtension(grant);
      }
    } finally {
      add(grant); // a tick no later than the grant's due time, which may have moved either way
    }
  }

  private static LockLostException lostBeforeExtension(Grant grant) {
    return new LockLostException(
        "Cannot extend the lease of lock '"
            + grant.lockName()
            + "' (fencing token "
            + grant.fencingToken()
            + "): it is "
            + grant.state().name().toLowerCase(Locale.ROOT));
  }

  private void scheduleNext() {
    // Under the lock, so that a grant added while this tick ran is either seen here or schedules
    // its own tick after this one is replaced.
    scheduleLock.lock();
    try {
      tickRunning = false;
      nextTick = null;
      long earliest = 0;
      boolean any = false;
      for (Grant grant : grants) {
        if (grant.hasEnded()) {
          continue;
        }
        long at = Math.min(dueAt(grant), grant.validUntilNanos());
        if (!any || at - earliest < 0) {
          earliest = at;
          any = true;
        }
      }
      if (any) {
        scheduleNoLaterThan(earliest);
      }
    } finally {
      scheduleLock.unlock();
    }
  }
}
