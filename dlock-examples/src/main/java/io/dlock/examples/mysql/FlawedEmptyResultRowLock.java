package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * <b>Flawed: do not use.</b> The {@code SELECT ... FOR UPDATE} lock as the other article writes it,
 * on its order table with a unique {@code tracking_id}: autocommit off, then, in a {@code
 * while(true)} loop, select the order's row {@code FOR UPDATE}; an <em>empty</em> result means
 * "locked" ("结果为空代表获取到锁"); every exception is swallowed; release commits.
 *
 * <p>What is wrong, each shown by {@code RowLockTest}:
 *
 * <ul>
 *   <li><b>An empty result locks nothing.</b> With no row to lock, InnoDB takes at most a gap lock
 *       (at the default REPEATABLE READ; none at all at READ COMMITTED), and gap locks of different
 *       transactions do not conflict: every client that selects the same absent tracking id gets an
 *       empty result at once and believes it holds the lock.
 *   <li><b>No bound.</b> Once the row exists (the order was inserted, the lock's whole purpose),
 *       the select returns it every time and the loop never ends, swallowing errors as it goes, and
 *       holding the row lock that its own first select took.
 * </ul>
 *
 * <p>The fix is {@link ForUpdateRowLock}: lock a row that exists on purpose (inserted first), count
 * only a returned row as the lock, and bound every wait.
 */
public final class FlawedEmptyResultRowLock {
  /** The article's order table, with a unique tracking id. */
  public static final String TABLE = "ex_flawed_orders";

  private final Connection connection;
  private final Duration retryPause;

  public FlawedEmptyResultRowLock(Connection connection, Duration retryPause) {
    this.connection = connection;
    this.retryPause = retryPause;
  }

  /** Creates the order table if it is missing. */
  public static void createIfMissing(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS "
              + TABLE
              + " (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
              + " tracking_id VARCHAR(100) NOT NULL, UNIQUE KEY uniq_tracking_id (tracking_id))"
              + " ENGINE = InnoDB");
    }
  }

  /** Inserts the order of {@code trackingId}. */
  public static void addOrder(DataSource dataSource, String trackingId) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("INSERT INTO " + TABLE + " (tracking_id) VALUES (?)")) {
      s.setString(1, trackingId);
      s.executeUpdate();
    }
  }

  /** Returns true once the select came back empty; loops for as long as it does not. */
  public boolean lock(String trackingId) throws SQLException, InterruptedException {
    connection.setAutoCommit(false);
    while (true) {
      try (PreparedStatement s =
          connection.prepareStatement(
              "SELECT * FROM " + TABLE + " WHERE tracking_id = ? FOR UPDATE")) {
        s.setString(1, trackingId);
        try (ResultSet rs = s.executeQuery()) {
          if (!rs.next()) {
            return true; // "结果为空代表获取到锁"
          }
        }
      } catch (Exception e) {
        // swallowed, as in the article
      }
      TimeUnit.NANOSECONDS.sleep(retryPause.toNanos());
    }
  }

  /** Commits the transaction. */
  public void release() throws SQLException {
    connection.commit();
  }
}
