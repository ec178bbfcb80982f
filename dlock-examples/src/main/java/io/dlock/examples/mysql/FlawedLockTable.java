package io.dlock.examples.mysql;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * <b>Flawed: do not use.</b> The articles' lock table: a table with a unique method name and a
 * timestamp; to lock, insert the method's row (the unique key lets one insert win); to unlock,
 * delete it. Their remedies are here as well: a loop that inserts until it wins, and a scheduled
 * job that deletes rows older than a timeout.
 *
 * <p>What is wrong, each shown by a test in {@code LockTableTest}:
 *
 * <ul>
 *   <li><b>No expiry.</b> Nothing ends a row but its holder's delete: a holder that crashes between
 *       insert and delete blocks the method for ever, and {@link #lock(String)}, the loop that
 *       inserts until it wins, waits for ever with it (it has no bound and no deadline).
 *   <li><b>Unlock checks no owner.</b> {@link #unlock(String)} deletes the row by method name, so
 *       whoever calls it releases whoever holds it: typically a caller whose own {@link
 *       #tryLock(String)} failed and whose {@code finally} unlocks anyway. A third caller then gets
 *       in beside the holder.
 *   <li><b>The cleanup job takes the lock from live holders.</b> {@link #purgeOlderThan(Duration)}
 *       judges rows by their age (and by the clock of whichever machine runs it), not by whether
 *       the holder is alive: it deletes the row of a holder that is merely slow, the next caller
 *       gets the lock, and the slow holder, which is not told, writes over the new holder's work
 *       and then deletes the new holder's row with its owner-less unlock.
 * </ul>
 *
 * <p>The fix is {@link LeaseRowLockTable}: a lease judged by the database's clock, renewed while
 * the holder lives; release and renewal only of the caller's own grant; a fencing token for the
 * resource ({@link FencedStock}); every wait bounded.
 */
public final class FlawedLockTable {
  /** The table's name. */
  public static final String TABLE = "ex_flawed_locks";

  private static final int DUPLICATE_KEY = 1062;

  private final DataSource dataSource;
  private final Duration retryPause;

  /**
   * @param retryPause how long {@link #lock(String)} sleeps between inserts
   */
  public FlawedLockTable(DataSource dataSource, Duration retryPause) {
    this.dataSource = dataSource;
    this.retryPause = retryPause;
  }

  /** Creates the table if it is missing: the method name is the unique key. */
  public void createIfMissing() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS "
              + TABLE
              + " (method_name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(200) NOT NULL,"
              + " created_at BIGINT NOT NULL) ENGINE = InnoDB");
    }
  }

  /** One insert: true if this caller's row went in, false if the method's row exists. */
  public boolean tryLock(String methodName) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO " + TABLE + " (method_name, holder, created_at) VALUES (?, ?, ?)")) {
      s.setString(1, methodName);
      s.setString(2, holder());
      s.setLong(3, System.currentTimeMillis()); // the client's clock: all the row knows of time
      s.executeUpdate();
      return true;
    } catch (SQLException e) {
      if (e.getErrorCode() == DUPLICATE_KEY) {
        return false;
      }
      throw e;
    }
  }

  /** Inserts until the insert wins ("使用while循环，直到insert成功再返回成功"): no bound. */
  public void lock(String methodName) throws SQLException, InterruptedException {
    while (!tryLock(methodName)) {
      TimeUnit.NANOSECONDS.sleep(retryPause.toNanos());
    }
  }

  /** Deletes the method's row, whoever inserted it. */
  public void unlock(String methodName) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("DELETE FROM " + TABLE + " WHERE method_name = ?")) {
      s.setString(1, methodName);
      s.executeUpdate();
    }
  }

  /**
   * The articles' scheduled cleanup ("做一个定时任务，每隔一定时间把数据库中的超时数据清理一遍"): deletes the rows older than
   * {@code age} by this machine's clock, whether their holders are alive or not.
   *
   * @return how many rows it deleted
   */
  public int purgeOlderThan(Duration age) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("DELETE FROM " + TABLE + " WHERE created_at <= ?")) {
      s.setLong(1, System.currentTimeMillis() - age.toMillis());
      return s.executeUpdate();
    }
  }

  private static String holder() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "unknown";
    }
    return host + "/" + ProcessHandle.current().pid() + "/" + Thread.currentThread().getName();
  }
}
