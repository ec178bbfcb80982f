package io.dlock.jdbc;

import io.dlock.spi.BackendEvents;
import org.jspecify.annotations.Nullable;

/**
 * Tells the holds of a grant of {@link HeldLocks} that the database freed its lock, through {@link
 * BackendEvents#leaseLost}: once per grant, by the thread that claimed the report, which alone may
 * clear the grant's record after.
 */
final class LossReports {
  private final HeldLockStatements statements;
  private volatile @Nullable BackendEvents events;

  LossReports(HeldLockStatements statements) {
    this.statements = statements;
  }

  void bindEvents(BackendEvents events) {
    this.events = events;
  }

  /**
   * Tells the holds of {@code h} that it is lost, unless that was done or is being done.
   *
   * @return whether this call told them (and so may clear the record)
   */
  boolean report(HeldGrant h) {
    if (claimReport(h)) {
      sendLost(h);
      return true;
    }
    return false;
  }

  /** Whether the loss of {@code h} is still to be reported; the caller then reports it, once. */
  boolean claimReport(HeldGrant h) {
    h.io.lock();
    try {
      if (h.reported || h.released) {
        return false;
      }
      h.reported = true;
      return true;
    } finally {
      h.io.unlock();
    }
  }

  void sendLost(HeldGrant h) {
    BackendEvents sink = events;
    if (sink != null) {
      sink.leaseLost(
          h.name,
          h.owner,
          "the database ended the connection holding the "
              + statements.mode()
              + " lock (killed, timed out or restarted) and so freed the lock");
    }
  }
}
