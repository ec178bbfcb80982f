package io.dlock.core;

import io.dlock.LeaseLostEvent;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code close()} does with a grant still held: releases its open holds, then tells their
 * holders that the lease is gone ({@link LeaseLostEvent.Reason#CLIENT_CLOSED}), since their work
 * may still run (asynchronous work, a thread the application did not stop). Not telling them left
 * such work running unlocked with no word (issue 29). The hold is reported lost, not released: its
 * holder did not let it go.
 *
 * <p>A holder that releases its own hold at the same moment keeps it (close() leaves it alone, and
 * waits for its release before it closes the backend); a release by close() that finds the lease
 * lost has told the holders itself, and is reported as that loss.
 */
final class GrantClose {
  private static final Logger log = LoggerFactory.getLogger(GrantClose.class);

  private GrantClose() {}

  static void endHolds(Grant grant, CoreLockClient client) {
    List<Consumer<LeaseLostEvent>> early = grant.lostListeners();
    boolean ended = false;
    boolean untold = true;
    String detail = "the lock client was closed while the lease was held; it was released";
    for (LeaseHandle hold : grant.startClosing()) {
      try {
        switch (hold.releaseForClose()) {
          case LeaseHandle.RELEASED_BY_CLOSE -> ended = true;
          case LeaseHandle.FOUND_LOST -> {
            ended = true;
            untold = false;
          }
          default -> {
            // Released by its holder first: nothing of close()'s.
          }
        }
      } catch (RuntimeException e) {
        ended = true;
        log.warn("Lock '{}' not released at close: {}", grant.lockName(), e.getMessage());
        detail =
            "the lock client was closed while the lease was held; its release failed ("
                + e.getMessage()
                + "), so the lock stays held on the server until the lease ends";
      }
    }
    if (!ended) {
      grant.endedByClose(null, false, List.of());
      return;
    }
    LeaseLostEvent event =
        new LeaseLostEvent(
            grant.lockName(), grant.fencingToken(), LeaseLostEvent.Reason.CLIENT_CLOSED, detail);
    GrantLoss.ClosedUnder closed = grant.endedByClose(event, untold, early);
    if (closed == null) {
      return;
    }
    if (closed.report() || !closed.listeners().isEmpty()) {
      log.warn(
          "Lease of lock '{}' (fencing token {}) ended under its holder: {}",
          grant.lockName(),
          grant.fencingToken(),
          detail);
    }
    for (Consumer<LeaseLostEvent> listener : closed.listeners()) {
      client.dispatch(listener, event);
    }
    if (closed.report()) {
      client.reportLost(event);
    }
  }
}
