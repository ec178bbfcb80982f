package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The records of the grants of {@link HeldLocks} in {@code <table>_held}, each a lease of its own
 * (see {@link HeldLockStatements}), kept through connections other than the holding one: written at
 * the grant (row mode), moved before the client extends its trust, read, and cleared once every
 * hold of the grant stopped trusting it.
 */
final class GrantRecords {
  // The logger of HeldLocks, whose work this is: the log lines keep their category.
  private static final Logger log = LoggerFactory.getLogger(HeldLocks.class);

  private final HeldLockStatements statements;
  private final HeldLocks.Connections connections;

  GrantRecords(HeldLockStatements statements, HeldLocks.Connections connections) {
    this.statements = statements;
    this.connections = connections;
  }

  /**
   * Records a new grant where the mode records apart (row mode; session mode recorded it in the
   * lock statement), through a connection of its own.
   *
   * @return the grant as recorded (row mode on MySQL draws its token here), or null if another
   *     grant's record is live: the grant must then be undone
   */
  HeldLockStatements.@Nullable Granted record(
      String name, String owner, String holder, HeldLockStatements.Granted locked, long leaseMillis)
      throws SQLException {
    if (!statements.recordsApart()) {
      return locked;
    }
    try (Connection other = connections.open()) {
      if (!other.getAutoCommit()) {
        other.setAutoCommit(true);
      }
      return statements.record(other, name, owner, holder, locked, leaseMillis);
    }
  }

  /**
   * Moves the recorded lease end of {@code h} to {@code leaseMillis} from now where the mode
   * records apart (row mode; session mode did in the heartbeat), before the client extends its
   * trust: the record must outlast the lease the holder trusts. Under {@code h.io}.
   *
   * @return false if it could not be confirmed (the database did not answer)
   * @throws SQLException if the record is no longer the grant's
   */
  boolean recordLease(HeldGrant h, long leaseMillis) throws SQLException {
    if (!statements.recordsApart()) {
      return true;
    }
    boolean recorded;
    try (Connection other = connections.open()) {
      if (!other.getAutoCommit()) {
        other.setAutoCommit(true);
      }
      recorded = statements.renewRecord(other, h.name, h.owner, h.token, leaseMillis);
    } catch (SQLException e) {
      log.debug("Could not move the record of '{}': {}", h.name, e.toString());
      return false;
    }
    if (!recorded) {
      throw new SQLException(
          "the record of the grant of '"
              + h.name
              + "' (token "
              + h.token
              + ") was cleared, or the session holding its lock ended",
          "08003");
    }
    return true;
  }

  /**
   * Clears the record of {@code h}, once every hold of it stopped trusting it (released, or told it
   * is lost), so that the next grant need not wait for its recorded lease end. Best effort: if it
   * fails, the record ends with its lease.
   */
  void clearRecord(HeldGrant h) {
    try (Connection other = connections.open()) {
      if (!other.getAutoCommit()) {
        other.setAutoCommit(true);
      }
      statements.clearRecord(other, h.name, h.token);
    } catch (SQLException e) {
      log.debug("Could not clear the record of '{}': {}", h.name, e.toString());
    }
  }

  /** Whether the record of {@code h} is still its grant's (uncleared); false if unknown. */
  boolean recordStillTheGrants(HeldGrant h) {
    try (Connection other = connections.open()) {
      return statements.recordHeld(other, h.name, h.token);
    } catch (SQLException e) {
      log.debug("Could not read the record of '{}': {}", h.name, e.toString());
      return false;
    }
  }
}
