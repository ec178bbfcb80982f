package io.dlock.examples.spring;

import io.dlock.spring.FencingToken;
import io.dlock.spring.Locked;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The stock of the flash sale, in a database table. A purchase reads the stock, calls the payment
 * service (simulated), and writes the stock back: a read-modify-write that oversells when two
 * buyers interleave, unless the lock covers it from the read to the commit.
 */
@Service
public class StockService {
  private final JdbcTemplate jdbc;
  private final Duration paymentTime;

  /**
   * @param paymentTime how long the simulated payment call takes between read and write
   */
  public StockService(
      JdbcTemplate jdbc, @Value("${flashsale.payment-time:20ms}") Duration paymentTime) {
    this.jdbc = jdbc;
    this.paymentTime = paymentTime;
  }

  /**
   * Buys under the lock {@code stock:<sku>}; the transaction commits before the lock is released,
   * and the stock row only accepts the write of a holder with a newer fencing token.
   */
  @Locked(name = "stock", key = "#sku", waitTime = "10s")
  @Transactional
  public Purchase buy(String sku, int quantity, @FencingToken long token) {
    int stock = stock(sku);
    pay();
    if (stock < quantity) {
      return Purchase.soldOut(sku, quantity, stock);
    }
    int updated =
        jdbc.update(
            "update stock set quantity = ?, fence = ? where sku = ? and fence < ?",
            stock - quantity,
            token,
            sku,
            token);
    if (updated == 0) {
      throw new IllegalStateException(
          "fencing token " + token + " for " + sku + " is older than the last write: lock lost");
    }
    jdbc.update("insert into sales (sku, quantity, token) values (?, ?, ?)", sku, quantity, token);
    return Purchase.sold(sku, quantity, stock - quantity, token);
  }

  /** The same purchase without the lock, to show what the lock prevents. */
  @Transactional
  public Purchase buyWithoutLock(String sku, int quantity) {
    int stock = stock(sku);
    pay();
    if (stock < quantity) {
      return Purchase.soldOut(sku, quantity, stock);
    }
    jdbc.update("update stock set quantity = ? where sku = ?", stock - quantity, sku);
    jdbc.update("insert into sales (sku, quantity, token) values (?, ?, 0)", sku, quantity);
    return Purchase.sold(sku, quantity, stock - quantity, 0);
  }

  /** The stock and the items sold so far. */
  public Inventory inventory(String sku) {
    Integer sold =
        jdbc.queryForObject(
            "select coalesce(sum(quantity), 0) from sales where sku = ?", Integer.class, sku);
    return new Inventory(sku, stock(sku), sold == null ? 0 : sold);
  }

  /** Puts {@code quantity} items in stock and forgets the sales. */
  @Transactional
  public Inventory restock(String sku, int quantity) {
    jdbc.update("delete from sales where sku = ?", sku);
    if (jdbc.update("update stock set quantity = ? where sku = ?", quantity, sku) == 0) {
      jdbc.update("insert into stock (sku, quantity, fence) values (?, ?, 0)", sku, quantity);
    }
    return inventory(sku);
  }

  private int stock(String sku) {
    Integer stock =
        jdbc.queryForObject("select quantity from stock where sku = ?", Integer.class, sku);
    if (stock == null) {
      throw new IllegalArgumentException("unknown sku " + sku);
    }
    return stock;
  }

  private void pay() {
    try {
      Thread.sleep(paymentTime.toMillis()); // simulates the payment call between read and write
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during payment", e);
    }
  }

  /**
   * The outcome of a purchase.
   *
   * @param sku the item
   * @param quantity how many were asked for
   * @param sold whether they were sold
   * @param remaining the stock after the purchase
   * @param fencingToken the lock's fencing token, 0 without the lock
   */
  public record Purchase(String sku, int quantity, boolean sold, int remaining, long fencingToken) {
    static Purchase sold(String sku, int quantity, int remaining, long token) {
      return new Purchase(sku, quantity, true, remaining, token);
    }

    static Purchase soldOut(String sku, int quantity, int remaining) {
      return new Purchase(sku, quantity, false, remaining, 0);
    }
  }

  /**
   * Stock and sales of one item.
   *
   * @param sku the item
   * @param stock items left
   * @param sold items sold
   */
  public record Inventory(String sku, int stock, int sold) {}
}
