package io.dlock.core;

import io.dlock.LeaseLostEvent;
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
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The renewal calls of {@link LeaseRenewer}'s ticks, on its one thread: which leases are due, one
 * batched call per lease length, how long each is waited for, and what its answer (or failure) does
 * to the grants in it.
 */
final class RenewalCalls {
  // The renewer's logger: what this logs is configured under its name.
  private static final Logger log = LoggerFactory.getLogger(LeaseRenewer.class);

  private final LockBackend backend;
  private final MonotonicClock clock;
  private final Duration operationTimeout;
  private final Collection<Grant> grants;
  private final LeaseEnds ends;
  private final LockEvents lockEvents;

  /** Failed renewal calls since the last success; only touched by the renewal thread. */
  private int failuresInARow;

  /**
   * @param grants the client's grants, a live view
   * @param ends their trusted ends, marked lost as they pass while a call is waited for
   */
  RenewalCalls(
      LockBackend backend,
      MonotonicClock clock,
      Duration operationTimeout,
      Collection<Grant> grants,
      LeaseEnds ends,
      LockEvents lockEvents) {
    this.backend = backend;
    this.clock = clock;
    this.operationTimeout = operationTimeout;
    this.grants = grants;
    this.ends = ends;
    this.lockEvents = lockEvents;
  }

  /**
   * Sends the renewals due, then applies each answer as it comes (or the call's failure at its
   * deadline), and meanwhile sends the renewals that fall due (a retry of a call given up, another
   * length's lease): a silent call of one length holds back neither another length's request nor
   * its answer, whose leases would otherwise run out meanwhile (found by review). After half the
   * operation timeout a tick sends only for leases that would end before the calls it waits for are
   * given up; each call is waited for at most the operation timeout, so a tick ends within about
   * one and a half, which {@link LeaseRenewer#extend} waits for its turn.
   */
  void renewDue() {
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
}
