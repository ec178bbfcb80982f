package io.dlock.torture;

import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A candidate's listener: writes every notice to the history as it is told ({@code ELECTED}, {@code
 * UNCERTAIN}, {@code RESTORED}, {@code REVOKED}, each with the term's epoch and number), and keeps
 * the term the candidate leads in for its main thread, which waits on it. Terms are numbered in the
 * order they are told, across the candidacies of one process (a new one follows a closed client).
 *
 * <p>A revocation is applied before it is written, as a lock worker's loss signal is: the leader
 * stops its work no later than the history says its term ended.
 */
final class CandidateNotices implements LeadershipListener {

  /** A term this candidate was told it leads, and its number ({@code #3}). */
  record Term(LeaderTerm term, long number) {
    long epoch() {
      return term.epoch();
    }
  }

  private final EventLog history;
  private final String election;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Map<Long, Long> numbers = new HashMap<>(); // epoch -> number
  private long told;
  private Term current; // elected and not revoked
  private boolean uncertain;

  CandidateNotices(EventLog history, String election) {
    this.history = history;
    this.election = election;
  }

  @Override
  public void elected(LeaderTerm term) {
    long number;
    lock.lock();
    try {
      number = ++told;
      numbers.put(term.epoch(), number);
    } finally {
      lock.unlock();
    }
    // Written before the main thread may act on it: no work of a term precedes its ELECTED line.
    history.append(Event.Kind.ELECTED, election, term.epoch(), "#" + number);
    lock.lock();
    try {
      current = new Term(term, number);
      uncertain = false;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void uncertain(LeaderTerm term) {
    sessionNotice(term, true);
  }

  @Override
  public void restored(LeaderTerm term) {
    sessionNotice(term, false);
  }

  private void sessionNotice(LeaderTerm term, boolean suspended) {
    lock.lock();
    try {
      if (current != null && current.term() == term) {
        uncertain = suspended;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
    history.append(
        suspended ? Event.Kind.UNCERTAIN : Event.Kind.RESTORED,
        election,
        term.epoch(),
        "#" + numberOf(term));
  }

  @Override
  public void revoked(LeaderTerm term, Revocation reason, String detail) {
    lock.lock();
    try {
      if (current != null && current.term() == term) {
        current = null;
        uncertain = false;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    history.append(
        Event.Kind.REVOKED,
        election,
        term.epoch(),
        "#" + numberOf(term) + " " + reason + " " + detail);
    if (reason != Revocation.RESIGNED && reason != Revocation.CLIENT_CLOSED) {
      // The candidacy competes again by itself (docs/election.md): a wait for the next term.
      history.append(Event.Kind.ACQUIRING, election, 0, "competes again");
    }
  }

  /** The term's number, or {@code ?} for an epoch never elected here (the checker reports it). */
  private String numberOf(LeaderTerm term) {
    lock.lock();
    try {
      Long number = numbers.get(term.epoch());
      return number == null ? "?" : Long.toString(number);
    } finally {
      lock.unlock();
    }
  }

  /** Waits until this candidate leads a term numbered above {@code after}, and returns it. */
  Term awaitTerm(long after) throws InterruptedException {
    lock.lock();
    try {
      while (current == null || current.number() <= after) {
        changed.await();
      }
      return current;
    } finally {
      lock.unlock();
    }
  }

  /** The term this candidate leads now (not revoked yet), if any. */
  Optional<Term> current() {
    lock.lock();
    try {
      return Optional.ofNullable(current);
    } finally {
      lock.unlock();
    }
  }

  /** Whether term {@code number} is not revoked yet. */
  boolean leads(long number) {
    lock.lock();
    try {
      return current != null && current.number() == number;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until term {@code number} is revoked or its uncertainty ends (restored), for at most
   * {@code max}.
   */
  void awaitCertainty(long number, Duration max) throws InterruptedException {
    long left = max.toNanos();
    lock.lock();
    try {
      while (leads(number) && uncertain && left > 0) {
        left = changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until term {@code number} is revoked, for at most {@code max}, through interrupts (a
   * close or a resignation goes through to its notice even as the run ends: the interrupt is kept
   * for after). Returns whether it was.
   */
  boolean awaitRevoked(long number, Duration max) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + max.toNanos();
    lock.lock();
    try {
      while (leads(number)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        try {
          changed.await(left, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      return !leads(number);
    } finally {
      lock.unlock();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
