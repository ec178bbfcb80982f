package io.dlock;

/**
 * Told of a candidate's leadership, on the client's event thread, once per change and in order:
 * {@code elected}, then any number of {@code uncertain} and {@code restored} pairs, then {@code
 * revoked}; and again for the next term.
 *
 * <p>A listener must not block for long: the client's other notices wait behind it.
 */
public interface LeadershipListener {

  /** This candidate leads from now on: start leader-only work, fenced with {@code term.epoch()}. */
  void elected(LeaderTerm term);

  /**
   * The backend's connection is suspended (a session-bound backend: ZooKeeper, a database session):
   * the term may end without this process being able to hear of it. Pause leader-only work until
   * {@link #restored} or {@link #revoked}.
   */
  default void uncertain(LeaderTerm term) {}

  /** The connection is back with the same session: the term stands; resume. */
  default void restored(LeaderTerm term) {}

  /**
   * The term has ended: stop leader-only work. Unless the candidate resigned or its client closed,
   * it competes again, and a later term is told with {@link #elected}.
   *
   * @param detail a human-readable explanation, for logs
   */
  void revoked(LeaderTerm term, Revocation reason, String detail);

  /**
   * A listener of {@code elected} and {@code revoked} alone (the uncertain and restored notices
   * ignored: fine where leader-only work is fenced with the epoch).
   */
  static LeadershipListener of(
      java.util.function.Consumer<LeaderTerm> elected,
      java.util.function.BiConsumer<LeaderTerm, Revocation> revoked) {
    java.util.Objects.requireNonNull(elected, "elected");
    java.util.Objects.requireNonNull(revoked, "revoked");
    return new LeadershipListener() {
      @Override
      public void elected(LeaderTerm term) {
        elected.accept(term);
      }

      @Override
      public void revoked(LeaderTerm term, Revocation reason, String detail) {
        revoked.accept(term, reason);
      }
    };
  }

  /** Why a term ended. */
  enum Revocation {
    /** Renewal found the term's lock deleted or held by another (a forced release, say). */
    TAKEN_OVER,
    /** Renewal could not reach the backend before the lease ran out. */
    EXPIRED,
    /** The backend session that carried the lease ended. */
    SESSION_LOST,
    /** The candidate resigned (or was closed). */
    RESIGNED,
    /** The lock client was closed. */
    CLIENT_CLOSED
  }
}
