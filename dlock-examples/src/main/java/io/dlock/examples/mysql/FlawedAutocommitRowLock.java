package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * <b>Flawed: do not use.</b> The {@code SELECT ... FOR UPDATE} lock of {@link FlawedRowLock} run
 * the way most application code runs a query: on a connection from the pool, in autocommit (the
 * JDBC default, and what a pool hands out; {@code JdbcTemplate} outside a transaction does the
 * same). The articles' listing turns autocommit off in its first line; this is the same lock
 * without that line, a slip that compiles, runs and passes every single-threaded test.
 *
 * <p>What is wrong: in autocommit every statement is its own transaction, and a row lock lasts as
 * long as its transaction. The {@code FOR UPDATE} locks the row and the commit that ends the
 * statement frees it, before {@link #lock(String)} even returns: every caller "gets" the lock at
 * once, and nothing is held while they work (shown by {@code RowLockTest}). The fix is {@link
 * ForUpdateRowLock}: a transaction kept open, on a connection of its own, from grant to release.
 */
public final class FlawedAutocommitRowLock {
  private final DataSource dataSource;

  public FlawedAutocommitRowLock(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Returns true if the lock's row (of {@link FlawedRowLock#TABLE}) was selected FOR UPDATE. */
  public boolean lock(String lockName) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT * FROM " + FlawedRowLock.TABLE + " WHERE lock_name = ? FOR UPDATE")) {
      s.setString(1, lockName);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next(); // the statement's commit has already freed the row
      }
    }
  }
}
