package io.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The network (socket read) timeout of a pooled connection while the backend uses it. Set when the
 * connection is borrowed, so that no read on it waits past the bound on a silent network (packets
 * dropped, no reset): the server's statement timeout does not cover a commit, nor an answer lost on
 * the way, and without this a thread waits in the read until TCP keepalive gives up (minutes to
 * hours, or never). Restored before the connection goes back to the pool, which may be the
 * application's own and expect its value back (HikariCP resets it itself; others may not).
 *
 * <p>Reading and setting it are local calls on pgjdbc and MariaDB Connector/J (the socket's {@code
 * SO_TIMEOUT}; no round trip). A read that times out breaks the connection: both drivers close it
 * and fail with an {@code 08} SQLState, so that the pool discards it rather than hand it out again.
 */
final class SocketTimeouts {
  // The logger of JdbcLockBackend, whose connections these are: the log lines keep their category.
  private static final Logger log = LoggerFactory.getLogger(JdbcLockBackend.class);

  /** What {@link #bound} returns when the driver has no network timeout: nothing to restore. */
  static final int NONE = -1;

  private SocketTimeouts() {}

  /**
   * The network timeout of every connection the backend uses: the statement timeout as the driver
   * applies it ({@code setQueryTimeout}, whole seconds rounded up), plus 1 s for the server's
   * answer to its cancel to come back. Past that only a silent socket waits (or a commit, which has
   * no statement timeout, held that long by a failing server: its outcome is unknown either way,
   * and the callers undo what it may have granted). A constant margin rather than a factor: the
   * answer after a cancel takes a round trip, however long the timeout.
   */
  static int millis(JdbcLockSettings settings) {
    long statementSeconds = (settings.statementTimeout().toMillis() + 999) / 1000;
    return (int) Math.min(Integer.MAX_VALUE, statementSeconds * 1000 + 1000);
  }

  /**
   * Bounds every read on {@code c} by {@code millis}.
   *
   * @return the timeout to {@link #restore} before {@code c} goes back to the pool, or {@link
   *     #NONE} if the driver has none (H2 in process has no network to wait on)
   */
  static int bound(Connection c, int millis) {
    try {
      int before = c.getNetworkTimeout();
      c.setNetworkTimeout(Runnable::run, millis);
      return before;
    } catch (SQLException | UnsupportedOperationException e) {
      log.debug("The driver has no network timeout: {}", e.toString());
      return NONE;
    }
  }

  /**
   * Gives {@code c} its network timeout from before {@link #bound} back. On a connection that broke
   * meanwhile this fails, quietly: the driver closed it, and the pool discards it.
   */
  static void restore(Connection c, int before) {
    if (before == NONE) {
      return;
    }
    try {
      c.setNetworkTimeout(Runnable::run, before);
    } catch (SQLException | UnsupportedOperationException e) {
      log.debug("Could not restore the network timeout of a connection: {}", e.toString());
    }
  }
}
