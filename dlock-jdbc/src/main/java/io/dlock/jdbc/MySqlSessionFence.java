package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Ends the server session of a statement whose answer was lost, before what it may have done is
 * undone. An autocommit statement still queued or waiting on the server (behind a lock the client
 * gave up on, in a slow network) would apply after an undo that found nothing, and its effect would
 * outlive everyone's knowledge of it (found by review of ea2a96a: a lease-row grant nobody held for
 * its whole lease). Once the server has let the session go, nothing sent on it can still apply.
 *
 * <p>Each physical connection's session id ({@code CONNECTION_ID()}) is read once, when it first
 * serves an acquisition, and kept while the connection lives: the fence must name the session
 * before its statement is lost.
 */
final class MySqlSessionFence {
  /** MySQL and MariaDB's "unknown thread id": the session has ended already. */
  private static final int UNKNOWN_THREAD = 1094;

  private final Map<Connection, Long> sessions = Collections.synchronizedMap(new WeakHashMap<>());
  private final int timeoutSeconds;

  MySqlSessionFence(int timeoutSeconds) {
    this.timeoutSeconds = timeoutSeconds;
  }

  /** The server session of {@code c}: read once per physical connection. */
  long sessionOf(Connection c) throws SQLException {
    Connection physical = c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
    Long known = sessions.get(physical);
    if (known != null) {
      return known;
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT CONNECTION_ID()")) {
      ps.setQueryTimeout(timeoutSeconds);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("CONNECTION_ID() returned no row");
        }
        long id = rs.getLong(1);
        sessions.put(physical, id);
        return id;
      }
    }
  }

  /**
   * Ends {@code session} through {@code other} ({@code KILL CONNECTION}: a statement it runs or
   * waits in is rolled back) and returns once the server lists it no more.
   *
   * @throws SQLException if it cannot be ended, or is still listed after the timeout
   */
  void end(Connection other, long session) throws SQLException {
    try (Statement st = other.createStatement()) {
      st.setQueryTimeout(timeoutSeconds);
      st.execute("KILL CONNECTION " + session); // a number read from the server, not text
    } catch (SQLException e) {
      if (e.getErrorCode() != UNKNOWN_THREAD) {
        throw e;
      }
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    try (PreparedStatement ps =
        other.prepareStatement("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ?")) {
      ps.setQueryTimeout(timeoutSeconds);
      ps.setLong(1, session);
      // A killed session ends as soon as its statement notices; the server offers no way to wait
      // for that, so ask again shortly, within the statement timeout.
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return;
          }
        }
        if (System.nanoTime() - deadline > 0) {
          throw new SQLException(
              "the session " + session + " of a statement whose answer was lost did not end");
        }
        try {
          TimeUnit.MILLISECONDS.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SQLException("interrupted while the session " + session + " ended", e);
        }
      }
    }
  }
}
