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
 * <b>Flawed: do not use.</b> The {@code SELECT ... FOR UPDATE} lock as one article writes it: a
 * lock object keeps one {@code connection}; {@link #lock(String)} turns autocommit off and selects
 * the lock's row {@code FOR UPDATE} (a row that must exist beforehand) up to four times, pausing
 * between tries and swallowing every exception; a row returned means "locked"; {@link #release()}
 * commits.
 *
 * <p>What is wrong: the database gives the row lock to the <em>transaction</em>, and the
 * transaction is the lock object's connection, shared by every thread that uses the object. A
 * second thread of the same process that calls {@link #lock(String)} runs its {@code FOR UPDATE} in
 * the transaction that already holds the row, so it returns at once: two threads in (shown by
 * {@code RowLockTest}). The first {@link #release()} commits that transaction and frees the row for
 * other processes while the second thread still works. The swallowed exceptions also turn a dead
 * connection or a lock-wait timeout into "try again", and after four tries into a failure that
 * looks like contention.
 *
 * <p>The fix is {@link ForUpdateRowLock}: a transaction and a connection of its own for each grant,
 * held by the calling thread (or owner id), never shared.
 */
public final class FlawedRowLock {
  /** The lock table of the article: one row per lock name, inserted beforehand. */
  public static final String TABLE = "ex_flawed_lock_rows";

  private static final int TRIES = 4;

  private final Connection connection;
  private final Duration retryPause;

  /**
   * @param connection the lock object's connection, as the article's {@code connection} field
   * @param retryPause how long to sleep between the four tries (the article: 1 s)
   */
  public FlawedRowLock(Connection connection, Duration retryPause) {
    this.connection = connection;
    this.retryPause = retryPause;
  }

  /** Creates the lock table if it is missing. */
  public static void createIfMissing(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS "
              + TABLE
              + " (lock_name VARCHAR(64) NOT NULL PRIMARY KEY) ENGINE = InnoDB");
    }
  }

  /** Adds the row of {@code lockName}: the article's lock only works on a row that exists. */
  public static void addLockRow(DataSource dataSource, String lockName) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("INSERT IGNORE INTO " + TABLE + " (lock_name) VALUES (?)")) {
      s.setString(1, lockName);
      s.executeUpdate();
    }
  }

  /**
   * Returns when the row was selected {@code FOR UPDATE} in this object's transaction.
   *
   * @throws IllegalStateException after four tries that did not return the row
   */
  public void lock(String lockName) throws SQLException, InterruptedException {
    connection.setAutoCommit(false);
    for (int count = 0; count < TRIES; count++) {
      try (PreparedStatement s =
          connection.prepareStatement(
              "SELECT * FROM " + TABLE + " WHERE lock_name = ? FOR UPDATE")) {
        s.setString(1, lockName);
        try (ResultSet rs = s.executeQuery()) {
          if (rs.next()) {
            return; // "代表获取到锁"
          }
        }
      } catch (Exception e) {
        // swallowed, as in the article: a dead connection looks like a lock held by another
      }
      TimeUnit.NANOSECONDS.sleep(retryPause.toNanos());
    }
    throw new IllegalStateException(
        "lock '" + lockName + "' not acquired after " + TRIES + " tries");
  }

  /** Commits this object's transaction: frees every row it locked, for whichever thread. */
  public void release() throws SQLException {
    connection.commit();
  }
}
