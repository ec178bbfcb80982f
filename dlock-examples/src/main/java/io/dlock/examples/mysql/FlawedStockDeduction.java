package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * <b>Flawed: do not use.</b> The stock deduction of the articles' opening example: read the stock,
 * check in Java that it covers the order, then write the new stock computed from that read ({@code
 * UPDATE ... SET stock = ? WHERE sku = ?}), with neither the version nor the quantity in the {@code
 * WHERE} clause.
 *
 * <p>What is wrong: the check and the write are two statements, and nothing ties the write to the
 * row that was checked. Two buyers who both read 4 both pass the check; the first writes 1 (4 - 3),
 * the second writes 2 (4 - 2) over it: 5 units sold from a stock of 4, and the stock still says 2
 * (the articles: "两个用户都得到库存为4 ... 更新库存为2"). A transaction does not help at the default isolation
 * level: the read takes no lock. The fix is {@link StockDeduction}: one conditional {@code UPDATE}
 * that checks version and quantity in the same statement.
 */
public final class FlawedStockDeduction {
  private final DataSource dataSource;
  private final BetweenReadAndWrite betweenReadAndWrite;

  FlawedStockDeduction(DataSource dataSource, BetweenReadAndWrite betweenReadAndWrite) {
    this.dataSource = dataSource;
    this.betweenReadAndWrite = betweenReadAndWrite;
  }

  /** Returns true if the buyer was told the purchase went through. */
  public boolean deduct(String sku, long quantity) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      long stock = StockTable.read(c, sku).stock();
      if (stock < quantity) {
        return false;
      }
      betweenReadAndWrite.run(1);
      try (PreparedStatement s =
          c.prepareStatement("UPDATE " + StockTable.TABLE + " SET stock = ? WHERE sku = ?")) {
        s.setLong(1, stock - quantity); // computed from a read that may be stale by now
        s.setString(2, sku);
        s.executeUpdate();
      }
      return true;
    }
  }
}
