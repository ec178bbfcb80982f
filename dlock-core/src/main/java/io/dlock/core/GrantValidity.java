package io.dlock.core;

import io.dlock.LeaseState;
import java.time.Duration;

/**
 * The state of one grant's lease and whether its holders may trust it now: the state the client set
 * (valid, uncertain while the backend cannot confirm it, lost, released), read against the trusted
 * end that {@link LeaseTerm} keeps.
 *
 * <p>A superclass of {@link Grant}, not a field of it, for the reason {@link LeaseTerm} is: a
 * client may hold many thousands of grants, and a second object each would cost its header. The
 * state changes under the grant's monitor, as the grant's own state does, and never over I/O.
 */
abstract class GrantValidity extends LeaseTerm {
  private volatile LeaseState state = LeaseState.VALID;

  // isValid, state and remaining read the trusted end under the monitor, where an answer that
  // would move it later checks that it has not passed (LeaseTerm#renewed): once a reader saw the
  // lease run out, it stays lost, whatever a renewal answered just after says (found by review).

  boolean isValid() {
    synchronized (this) {
      return state == LeaseState.VALID && validUntilNanos() - nowNanos() > 0;
    }
  }

  /**
   * Whether the grant is lost or released: a state it never leaves. Such a grant is never renewed
   * again.
   */
  boolean hasEnded() {
    LeaseState s = state;
    return s == LeaseState.LOST || s == LeaseState.RELEASED;
  }

  LeaseState state() {
    synchronized (this) {
      LeaseState s = state;
      if ((s == LeaseState.VALID || s == LeaseState.UNCERTAIN)
          && validUntilNanos() - nowNanos() <= 0) {
        return LeaseState.LOST;
      }
      return s;
    }
  }

  Duration remaining() {
    synchronized (this) {
      long left = validUntilNanos() - nowNanos();
      return state == LeaseState.VALID && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }
  }

  /** The backend cannot confirm the lease for now: not valid until restored. */
  void suspend() {
    boolean changed = false;
    synchronized (this) {
      if (state == LeaseState.VALID) {
        state = LeaseState.UNCERTAIN;
        changed = true;
      }
    }
    if (changed) {
      sessionChanged(true);
    }
  }

  /** The backend's session is back: an uncertain lease is valid again (if not run out). */
  void restore() {
    boolean changed = false;
    synchronized (this) {
      if (state == LeaseState.UNCERTAIN) {
        state = LeaseState.VALID;
        changed = true;
      }
    }
    if (changed) {
      sessionChanged(false);
    }
  }

  /** Told after the state went from valid to uncertain (true) or back (false). */
  void sessionChanged(boolean suspended) {}

  /**
   * Whether the lease ran out while the state still says valid or uncertain: lost, not yet marked
   * so. Read without the monitor (a release's first look; it marks the grant lost if so).
   */
  boolean ranOutUnmarked() {
    LeaseState now = state;
    return (now == LeaseState.VALID || now == LeaseState.UNCERTAIN)
        && validUntilNanos() - nowNanos() <= 0;
  }

  /** The state as last set, without the look at the trusted end that {@link #state()} takes. */
  final LeaseState stateAsSet() {
    return state;
  }

  /** Sets the state; callers hold this grant's monitor. */
  final void setState(LeaseState next) {
    state = next;
  }
}
