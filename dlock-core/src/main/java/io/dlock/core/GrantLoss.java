package io.dlock.core;

import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One grant's loss and who hears of it: its lost-lease listeners, the loss they were told, whether
 * the client's event listener was told, and the monitor sections that end the grant (a hold's end,
 * close()'s; see {@link GrantRelease} and {@link GrantClose}). The listeners are told, and the loss
 * reported, outside the monitor.
 *
 * <p>A superclass of {@link Grant}, not a field of it, for the reason {@link LeaseTerm} is: a
 * client may hold many thousands of grants, and a second object each would cost its header.
 */
abstract class GrantLoss extends GrantHolds {
  /** Grant's logger, not this class's: these messages always were Grant's, as configs name them. */
  private static final Logger log = LoggerFactory.getLogger(Grant.class);

  /** Lost-lease listeners; created on the first registration. */
  private @Nullable List<Consumer<LeaseLostEvent>> listeners;

  private @Nullable LeaseLostEvent lostEvent;

  /** See {@link #handedOut()}; guarded by this grant's monitor, as is {@link #lossReported}. */
  private boolean handedOut;

  private boolean lossReported;

  /** See {@link #startClosing}; guarded by this grant's monitor. */
  private boolean closing;

  // The grant's identity, which Grant keeps: whom to tell, and what a loss event names.

  abstract CoreLockClient client();

  abstract String lockName();

  abstract long fencingToken();

  /**
   * The grant reached its holder: its loss from now on is reported to the client's event listener
   * (a grant undone before anybody had it, its request having seen its session lost, is no loss to
   * report). A loss that came first is reported now.
   */
  void handedOut() {
    LeaseLostEvent toReport = null;
    synchronized (this) {
      handedOut = true;
      if (lostEvent != null && !lossReported) {
        lossReported = true;
        toReport = lostEvent;
      }
    }
    if (toReport != null) {
      client().reportLost(toReport);
    }
  }

  /** Marks the grant lost and tells its listeners, once. No effect once released or lost. */
  boolean markLost(LeaseLostEvent.Reason reason, String detail) {
    List<Consumer<LeaseLostEvent>> toTell;
    LeaseLostEvent event;
    boolean report;
    synchronized (this) {
      if (hasEnded()) {
        return false;
      }
      setState(LeaseState.LOST);
      event = new LeaseLostEvent(lockName(), fencingToken(), reason, detail);
      lostEvent = event;
      toTell = listeners == null ? List.of() : List.copyOf(listeners);
      listeners = null;
      report = handedOut && !lossReported;
      lossReported |= report;
    }
    log.warn(
        "Lease of lock '{}' (fencing token {}) lost: {} ({})",
        lockName(),
        fencingToken(),
        reason,
        detail);
    for (Consumer<LeaseLostEvent> listener : toTell) {
      client().dispatch(listener, event);
    }
    if (report) {
      client().reportLost(event);
    }
    return true;
  }

  void addLostListener(Consumer<LeaseLostEvent> listener) {
    LeaseLostEvent event;
    synchronized (this) {
      event = lostEvent;
      if (event == null) {
        if (stateAsSet() != LeaseState.RELEASED || closing) {
          if (listeners == null) {
            listeners = new ArrayList<>(1);
          }
          listeners.add(listener);
        }
        return;
      }
    }
    client().dispatch(listener, event);
  }

  /** What ending one hold left ({@link #endHold}). */
  record EndedHold(int left, LeaseState before, List<Consumer<LeaseLostEvent>> releasedListeners) {}

  /**
   * Ends one hold, released or abandoned by its holder (see {@link GrantRelease}). The last hold of
   * a grant not lost leaves it released; its listeners are handed to the caller, who tells them if
   * the server's answer shows a loss.
   *
   * @return the holds left open, the state before, and the listeners of a grant released as a whole
   *     (none otherwise)
   */
  EndedHold endHold(LeaseHandle handle) {
    int left;
    LeaseState before;
    List<Consumer<LeaseLostEvent>> releasedListeners = List.of();
    synchronized (this) {
      removeHandle(handle);
      left = handleCount();
      before = stateAsSet();
      if (left == 0 && before != LeaseState.LOST) {
        setState(LeaseState.RELEASED);
        if (listeners != null) {
          releasedListeners = listeners;
        }
        listeners = null;
      }
    }
    return new EndedHold(left, before, releasedListeners);
  }

  /**
   * close() starts ending this grant's holds (see {@link GrantClose}): listeners registered from
   * now on are kept for its report, even once a holder's own release ended the grant.
   *
   * @return the open holds, newest first
   */
  List<LeaseHandle> startClosing() {
    synchronized (this) {
      closing = true;
      return handlesNewestFirst();
    }
  }

  /** The lost-lease listeners registered now. */
  List<Consumer<LeaseLostEvent>> lostListeners() {
    synchronized (this) {
      return listeners == null ? List.of() : List.copyOf(listeners);
    }
  }

  /** Whom close() tells that it ended the grant, and whether to report it to the client. */
  record ClosedUnder(List<Consumer<LeaseLostEvent>> listeners, boolean report) {}

  /**
   * close() ended holds of this grant: it is lost to its holders, who did not let it go ({@code
   * event}), unless it was lost already (its loss was told then). A null event: close() ended none
   * (their holders released them first).
   *
   * @param untold whether a release made by close() did not tell the holders itself (false: it
   *     found the lease lost, and told those registered then)
   * @param early the listeners registered when close() started
   * @return whom to tell, or null if nobody
   */
  @Nullable ClosedUnder endedByClose(
      @Nullable LeaseLostEvent event, boolean untold, List<Consumer<LeaseLostEvent>> early) {
    synchronized (this) {
      closing = false;
      if (event == null || stateAsSet() == LeaseState.LOST) {
        return null; // markLost told its listeners and reported it
      }
      setState(LeaseState.LOST); // and a listener that comes later is told at once
      lostEvent = event;
      List<Consumer<LeaseLostEvent>> toTell = new ArrayList<>(untold ? early : List.of());
      if (listeners != null) {
        for (Consumer<LeaseLostEvent> listener : listeners) {
          if (!toTell.contains(listener)) {
            toTell.add(listener);
          }
        }
        listeners = null;
      }
      boolean report = untold && handedOut && !lossReported;
      // Reported now or never: a grant close() ended before it was handed out had no holder, and
      // handedOut() must not report it later (its caller is told the client closed).
      lossReported = true;
      return new ClosedUnder(toTell, report);
    }
  }
}
