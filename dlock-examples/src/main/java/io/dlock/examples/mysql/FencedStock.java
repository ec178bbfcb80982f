package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The stock as a resource that checks fencing tokens: each row remembers the highest token that
 * wrote it, and a write with a lower token is refused, in the same statement that would write:
 *
 * <pre>{@code
 * UPDATE ex_fenced_stock SET stock = ?, fence = ? WHERE sku = ? AND fence <= ?
 * }</pre>
 *
 * <p>Why: no lock can stop a holder that paused (a GC pause, a slow call) past the end of its lease
 * from writing when it wakes up, after the next holder has written. A lock table that expires
 * leases (or the articles' cleanup job that deletes old lock rows) hands the lock to someone else
 * while the first holder still works. The fencing token of {@link io.dlock.Lease#fencingToken()}
 * grows with every grant of a lock name, so the resource can tell the late write from the current
 * one and keep the current one. A holder's own writes share one token, hence {@code <=}.
 */
public final class FencedStock {
  /** The table's name. */
  public static final String TABLE = "ex_fenced_stock";

  private final DataSource dataSource;

  public FencedStock(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Creates the table if it is missing. */
  public void createIfMissing() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS "
              + TABLE
              + " (sku VARCHAR(64) NOT NULL PRIMARY KEY, stock BIGINT NOT NULL,"
              + " fence BIGINT NOT NULL) ENGINE = InnoDB");
    }
  }

  /** Sets the stock of {@code sku} with no writer yet (fence 0), adding the row if missing. */
  public void put(String sku, long stock) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO "
                    + TABLE
                    + " (sku, stock, fence) VALUES (?, ?, 0)"
                    + " ON DUPLICATE KEY UPDATE stock = VALUES(stock), fence = 0")) {
      s.setString(1, sku);
      s.setLong(2, stock);
      s.executeUpdate();
    }
  }

  /** The stock of {@code sku}. */
  public long stock(String sku) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s = c.prepareStatement("SELECT stock FROM " + TABLE + " WHERE sku = ?")) {
      s.setString(1, sku);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("no row for sku '" + sku + "' in " + TABLE);
        }
        return rs.getLong(1);
      }
    }
  }

  /**
   * Writes the stock of {@code sku} if no later holder wrote it.
   *
   * @param fencingToken the writer's {@link io.dlock.Lease#fencingToken()}
   * @return true if written; false if a writer with a higher token wrote first (this writer's lease
   *     is over: it must stop, and not retry)
   */
  public boolean write(String sku, long stock, long fencingToken) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "UPDATE " + TABLE + " SET stock = ?, fence = ? WHERE sku = ? AND fence <= ?")) {
      s.setLong(1, stock);
      s.setLong(2, fencingToken);
      s.setString(3, sku);
      s.setLong(4, fencingToken);
      return s.executeUpdate() == 1;
    }
  }

  /**
   * Writes the stock of {@code sku} with no token: what a resource without fencing does with every
   * write, a stale one included. Here for the flawed lock table's test, which has no token to give.
   */
  public void writeUnfenced(String sku, long stock) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement("UPDATE " + TABLE + " SET stock = ? WHERE sku = ?")) {
      s.setLong(1, stock);
      s.setString(2, sku);
      s.executeUpdate();
    }
  }
}
