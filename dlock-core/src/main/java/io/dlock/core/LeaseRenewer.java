package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockLostException;
import io.dlock.MonotonicClock;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * <p>A tick renews, in one call, every lease due within a sixth of its lease time and every lease
 * that would fall due before the next tick: so a client makes one renewal request per tick, however
 * many leases it holds and however their due times were spread. All ticks run on one thread, so
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

  private final LockEvents lockEvents;

  /** Failed renewal calls since the last success; only touched by the renewal thread. */
  private int failuresInARow;

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
    this.lockEvents = lockEvents;
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
      renewDueLeases();
    } catch (RuntimeException e) {
      log.error("Lease renewal tick failed; retrying", e);
    } finally {
      scheduleNext();
    }
  }

  /**
   * Sends the renewals due, then applies each answer as it comes (or the call's failure at its
   * deadline), and meanwhile sends the renewals that fall due (a retry of a call given up, another
   * length's lease): a silent call of one length holds back neither another length's request nor
   * its answer, whose leases would otherwise run out meanwhile (found by review). After half the
   * operation timeout a tick sends only for leases that would end before the calls it waits for are
   * given up; each call is waited for at most the operation timeout, so a tick ends within about
   * one and a half, which {@link #extend} waits for its turn.
   */
  private void renewDueLeases() {
    // Waits for answers are real time (System.nanoTime), as LeaseEnds#await's; due times and
    // lease ends are on the client's clock.
    long tickStart = System.nanoTime();
    List<SentRenewal> pending = new ArrayList<>();
    Set<Grant> inFlight = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    // The tick's first look takes every lease due within a sixth of its lease (its time came, or
    // comes before the next tick would); later looks only those whose time came.
    boolean first = true;
    while (true) {
      long now = clock.nanoTime();
      long realNow = System.nanoTime();
      long endingBefore = Long.MAX_VALUE; // no bound: every due lease
      if (!first && realNow - tickStart >= operationTimeout.toNanos() / 2) {
        long lastDeadline = Long.MIN_VALUE;
        for (SentRenewal renewal : pending) {
          lastDeadline = Math.max(lastDeadline, renewal.realDeadline());
        }
        endingBefore = pending.isEmpty() ? Long.MIN_VALUE : now + (lastDeadline - realNow);
      }
      long nextDue = sendDue(now, first, endingBefore, pending, inFlight);
      first = false;
      realNow = System.nanoTime();
      long wait = Long.MAX_VALUE;
      boolean finished = false;
      for (Iterator<SentRenewal> it = pending.iterator(); it.hasNext(); ) {
        SentRenewal renewal = it.next();
        if (renewal.answer().isDone() || renewal.realDeadline() - realNow <= 0) {
          it.remove();
          renewal.batch().forEach(inFlight::remove);
          finish(renewal);
          finished = true;
        } else {
          wait = Math.min(wait, renewal.realDeadline() - realNow);
        }
      }
      if (pending.isEmpty()) {
        return;
      }
      if (finished) {
        continue; // its leases' next renewal times count now (a failed call's retry among them)
      }
      if (nextDue != Long.MAX_VALUE) {
        wait = Math.min(wait, nextDue - clock.nanoTime());
      }
      List<CompletableFuture<Set<HeldLease>>> answers = new ArrayList<>(pending.size());
      pending.forEach(r -> answers.add(r.answer()));
      ends.awaitAny(answers, Math.max(1_000_000L, wait));
    }
  }

  /**
   * Sends one call per lease length with a lease due, of every lease of that length not already in
   * a call under way, and marks lost the leases that ran out.
   *
   * @param withinASixth whether a lease due within a sixth of its lease counts as due (a tick's
   *     first look), or only one whose renewal time came (a failed call's retry waits its gap)
   * @param endingBefore when the calls waited for are given up at the latest: only a length with a
   *     due lease that would then have less than a third of its lease left counts (Long.MAX_VALUE:
   *     any)
   * @return when the next lease not in a call falls due (its renewal time), or Long.MAX_VALUE
   */
  private long sendDue(
      long now,
      boolean withinASixth,
      long endingBefore,
      List<SentRenewal> pending,
      Set<Grant> inFlight) {
    // By lease length: one call per length, whose timeout then fits every lease in it, and whose
    // failure (a timeout, a node down) reaches no lease of another length.
    Map<Long, List<Grant>> byLength = new HashMap<>();
    Set<Long> lengthsDue = new HashSet<>();
    long nextDue = Long.MAX_VALUE;
    for (Grant grant : grants) {
      if (grant.hasEnded() || inFlight.contains(grant)) {
        continue; // lost, and not yet released by its holder (never renewed again); or under way
      }
      if (LeaseEnds.markLostIfEnded(grant, now)) {
        continue;
      }
      if (grant.autoRenew()) {
        byLength.computeIfAbsent(grant.leaseNanos(), n -> new ArrayList<>()).add(grant);
        long slack = withinASixth ? grant.trustedLeaseNanos() / 6 : 0;
        long renewAt = grant.nextRenewalNanos();
        if (renewAt - slack - now <= 0) {
          // After the send window: only a lease that would not have a third of its lease left,
          // to be renewed in the next tick, once the calls waited for are given up.
          if (endingBefore == Long.MAX_VALUE
              || grant.validUntilNanos() - (endingBefore + grant.trustedLeaseNanos() / 3) < 0) {
            lengthsDue.add(grant.leaseNanos());
          }
        } else if (nextDue == Long.MAX_VALUE || renewAt - nextDue < 0) {
          nextDue = renewAt;
        }
      }
    }
    // Once one lease of a length is due, every lease of that length goes along (each falls due
    // within a third of the lease, before the next tick would): one request per tick and length,
    // however the leases' due times were spread when they were taken. Renewing a lease early only
    // moves its end later; after one tick the due times of a length coincide. Every length's call
    // is sent before any is waited for.
    for (Long length : lengthsDue) {
      List<Grant> batch = byLength.get(length);
      inFlight.addAll(batch);
      pending.add(send(batch));
    }
    return nextDue;
  }

  /** A batch's renewal call, sent and not yet answered. */
  private record SentRenewal(
      List<Grant> batch,
      Map<HeldLease, List<Grant>> byLease,
      long sentAt,
      long waitNanos,
      long realDeadline,
      CompletableFuture<Set<HeldLease>> answer) {}

  /** Sends the renewal of one batch. */
  private SentRenewal send(List<Grant> batch) {
    // Grants of one owner id with different options are separate grants of the same server lease
    // (equal name, owner, token and length): one request each, and each one's answer to all of
    // them.
    Map<HeldLease, List<Grant>> byLease = new HashMap<>();
    for (Grant grant : batch) {
      byLease.computeIfAbsent(grant.heldLease(), l -> new ArrayList<>(1)).add(grant);
    }
    long sentAt = clock.nanoTime();
    CompletableFuture<Set<HeldLease>> answer;
    try {
      answer = backend.renew(List.copyOf(byLease.keySet()));
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    long wait = waitNanos(batch, sentAt);
    return new SentRenewal(batch, byLease, sentAt, wait, System.nanoTime() + wait, answer);
  }

  /**
   * How long a renewal sent at {@code now} is waited for: until two retry gaps (a fifth of the
   * lease) before the batch's first trusted end, and at least a third of the lease; never past the
   * operation timeout. A renewal of several round trips over a slow path (a JDBC backend: the
   * pool's validation, then the statement; 400 ms round trips against a 2 s lease) is answered in
   * time there, where a third of the lease gave it up, and its retry came back after the lease had
   * ended. The two gaps left are for a retry where the call was lost rather than slow (a dead
   * connection on a fast path): one gap before it is sent ({@link LeaseTerm#retryGapNanos}), one
   * for its answer (found by review: with one tenth left, the retry fell due at the trusted end,
   * and the lease was lost after a single lost call).
   */
  private long waitNanos(List<Grant> batch, long now) {
    long trusted = batch.get(0).trustedLeaseNanos();
    long firstEnd = Long.MAX_VALUE;
    for (Grant grant : batch) {
      long end = grant.validUntilNanos();
      if (firstEnd == Long.MAX_VALUE || end - firstEnd < 0) {
        firstEnd = end;
      }
    }
    long untilEnd = firstEnd - now - 2 * LeaseTerm.retryGapNanos(trusted);
    return Math.max(
        1_000_000L, Math.min(operationTimeout.toNanos(), Math.max(trusted / 3, untilEnd)));
  }

  /**
   * Applies a batch's renewal answer, or its failure: the call failed, or was not answered by its
   * deadline.
   */
  private void finish(SentRenewal renewal) {
    Map<HeldLease, List<Grant>> byLease = renewal.byLease();
    long sentAt = renewal.sentAt();
    String operation = "renew " + byLease.size() + " lease(s)";
    Set<HeldLease> gone;
    try {
      if (!renewal.answer().isDone()) {
        throw ends.noAnswer(operation, renewal.waitNanos());
      }
      gone = ends.await(renewal.answer(), 1_000_000L, operation); // answered: at once
    } catch (RuntimeException e) {
      if (failuresInARow++ == 0) {
        log.warn(
            "Renewal of {} lease(s) failed, retrying until they run out: {}",
            byLease.size(),
            e.toString());
      } else {
        log.debug("Renewal failed again ({} in a row): {}", failuresInARow, e.toString());
      }
      long failedAt = clock.nanoTime();
      for (Map.Entry<HeldLease, List<Grant>> entry : byLease.entrySet()) {
        for (Grant grant : entry.getValue()) {
          grant.renewalFailed(sentAt, entry.getKey().lease().toNanos(), failedAt);
        }
      }
      lockEvents.renewalFailed(renewal.batch().size(), e);
      return;
    }
    if (failuresInARow > 0) {
      log.info("Renewal works again after {} failed attempt(s)", failuresInARow);
      failuresInARow = 0;
    }
    for (Map.Entry<HeldLease, List<Grant>> entry : byLease.entrySet()) {
      for (Grant grant : entry.getValue()) {
        if (gone.contains(entry.getKey())) {
          grant.markLost(
              LeaseLostEvent.Reason.TAKEN_OVER,
              "renewal found the lock deleted or held by another owner");
        } else if (!grant.renewed(sentAt, entry.getKey().lease().toNanos())) {
          grant.markLost(
              LeaseLostEvent.Reason.EXPIRED,
              "the renewal was answered after the lease of " + grant.leaseTime() + " ran out");
        }
      }
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
