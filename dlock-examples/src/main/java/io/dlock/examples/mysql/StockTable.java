package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The shop's stock in the database: one row per SKU in {@value #TABLE} with the units in stock and
 * a version that every change of the row raises. The deductions ({@link StockDeduction} and the
 * flawed ones) work on this table; this class only creates, sets and reads it.
 */
public final class StockTable {
  /** The table's name. */
  public static final String TABLE = "ex_stock";

  /** One row as read: the units in stock and the row's version at the time of the read. */
  public record StockRow(long stock, long version) {}

  private final DataSource dataSource;

  public StockTable(DataSource dataSource) {
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
              + " version BIGINT NOT NULL) ENGINE = InnoDB");
    }
  }

  /**
   * Sets the stock of {@code sku}, adding the row if it is missing. The version goes up, never back
   * to an earlier value, so that a reader of the old row cannot match the new one.
   */
  public void put(String sku, long stock) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO "
                    + TABLE
                    + " (sku, stock, version) VALUES (?, ?, 0)"
                    + " ON DUPLICATE KEY UPDATE stock = VALUES(stock), version = version + 1")) {
      s.setString(1, sku);
      s.setLong(2, stock);
      s.executeUpdate();
    }
  }

  /**
   * The row of {@code sku}.
   *
   * @throws IllegalStateException if there is no row for {@code sku}
   */
  public StockRow read(String sku) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return read(c, sku);
    }
  }

  static StockRow read(Connection c, String sku) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement("SELECT stock, version FROM " + TABLE + " WHERE sku = ?")) {
      s.setString(1, sku);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("no stock row for sku '" + sku + "' in " + TABLE);
        }
        return new StockRow(rs.getLong(1), rs.getLong(2));
      }
    }
  }
}
