package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * <b>Flawed: do not use.</b> The version-checked update as the articles write it: first {@code
 * SELECT stock, version}, then {@code UPDATE ... SET stock = ?, version = ? WHERE sku = ? AND
 * version = ?} with the version read, and nothing after it.
 *
 * <p>The {@code WHERE version = ?} does stop the lost update of {@link FlawedStockDeduction}: a
 * second writer's update no longer lands on a row that changed. What is wrong is what happens to
 * that second writer: in SQL a version mismatch is not an error, only an update count of 0, and the
 * articles' two steps neither read that count nor try again. So a buyer whose update matched
 * nothing is told the purchase went through, and the shop ships goods that were never taken from
 * the stock. Reading the count alone would only turn that into a refusal of a buyer who lost a race
 * although the stock covered the order (one of the articles: "查询时显示可以购买，但最终只有一个人能成功"). The fix is
 * {@link StockDeduction}: read the update count, and on 0 read again and retry, a bounded number of
 * times.
 */
public final class FlawedVersionedStockDeduction {
  private final DataSource dataSource;
  private final BetweenReadAndWrite betweenReadAndWrite;

  FlawedVersionedStockDeduction(DataSource dataSource, BetweenReadAndWrite betweenReadAndWrite) {
    this.dataSource = dataSource;
    this.betweenReadAndWrite = betweenReadAndWrite;
  }

  /** Returns true if the buyer was told the purchase went through. */
  public boolean deduct(String sku, long quantity) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      StockTable.StockRow row = StockTable.read(c, sku);
      if (row.stock() < quantity) {
        return false;
      }
      betweenReadAndWrite.run(1);
      try (PreparedStatement s =
          c.prepareStatement(
              "UPDATE "
                  + StockTable.TABLE
                  + " SET stock = ?, version = ? WHERE sku = ? AND version = ?")) {
        s.setLong(1, row.stock() - quantity);
        s.setLong(2, row.version() + 1);
        s.setString(3, sku);
        s.setLong(4, row.version());
        s.executeUpdate(); // the update count, 0 when the version moved on, is never looked at
      }
      return true;
    }
  }
}
