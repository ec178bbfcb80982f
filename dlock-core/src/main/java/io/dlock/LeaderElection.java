package io.dlock;

import java.util.Optional;

/**
 * This process's candidacy in a leader election: at most one candidate of an election leads at a
 * time, for a term that is a renewed lease on the election's lock. A candidate that joins competes
 * in the background (woken by the backend, as a waiting lock is) and is told of each term through
 * its {@link LeadershipListener}; a leader whose lease is lost is told so and competes again.
 *
 * <p>Terms never overlap as the backend judges leases: a new leader is elected only once the old
 * term's lease has ended on the server. A leader that cannot hear of its term's end in time (a
 * process paused past its lease) may still act for a while: resources it writes to should fence
 * with {@link LeaderTerm#epoch()}.
 */
public interface LeaderElection extends AutoCloseable {

  /** The election's name (its lock's name). */
  String name();

  /** Competes from now on, in the background; nothing if already competing. */
  void join();

  /**
   * Ends this candidate's term if it leads ({@link LeadershipListener.Revocation#RESIGNED}) and
   * stops competing until {@link #join()}. Returns once the term's lock is released (or its release
   * reported as failed: the term then ends on the server with its lease).
   */
  void resign();

  /** Whether this candidate leads now: a term whose lease is valid. */
  boolean isLeader();

  /** This candidate's term, while it leads. */
  Optional<LeaderTerm> term();

  /**
   * Who leads now, in any process, as the backend says: its holder description, epoch ({@link
   * LockInfo#fencingToken()}) and the time left of its lease; empty if nobody leads.
   *
   * @throws BackendUnavailableException if the backend does not answer within the operation timeout
   */
  Optional<LockInfo> leader();

  /** Resigns for good: {@link #join()} is refused from now on. */
  @Override
  void close();
}
