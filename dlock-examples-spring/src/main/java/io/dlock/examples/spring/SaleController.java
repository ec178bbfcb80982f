package io.dlock.examples.spring;

import io.dlock.examples.spring.StockService.Inventory;
import io.dlock.examples.spring.StockService.Purchase;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The sale over HTTP. {@code POST /sale/{sku}/buy?quantity=2}: 200 with the purchase, or 409 when
 * the stock is too low. {@code /buy-unlocked} does the same without the lock.
 */
@RestController
@RequestMapping("/sale/{sku}")
public class SaleController {
  private final StockService stock;

  /** A controller over {@code stock}. */
  public SaleController(StockService stock) {
    this.stock = stock;
  }

  /** Buys under the distributed lock. */
  @PostMapping("/buy")
  public ResponseEntity<Purchase> buy(
      @PathVariable("sku") String sku,
      @RequestParam(name = "quantity", defaultValue = "1") int quantity) {
    return answer(stock.buy(sku, checked(quantity), 0));
  }

  /** Buys without the lock: oversells under concurrent requests. */
  @PostMapping("/buy-unlocked")
  public ResponseEntity<Purchase> buyUnlocked(
      @PathVariable("sku") String sku,
      @RequestParam(name = "quantity", defaultValue = "1") int quantity) {
    return answer(stock.buyWithoutLock(sku, checked(quantity)));
  }

  /** Stock and sales. */
  @GetMapping
  public Inventory inventory(@PathVariable("sku") String sku) {
    return stock.inventory(sku);
  }

  /** Refills the stock and clears the sales. */
  @PostMapping("/restock")
  public Inventory restock(
      @PathVariable("sku") String sku,
      @RequestParam(name = "quantity", defaultValue = "100") int quantity) {
    return stock.restock(sku, quantity);
  }

  private static int checked(int quantity) {
    if (quantity < 1 || quantity > 1000) {
      throw new IllegalArgumentException("quantity must be from 1 to 1000, but was " + quantity);
    }
    return quantity;
  }

  private static ResponseEntity<Purchase> answer(Purchase purchase) {
    return ResponseEntity.status(purchase.sold() ? HttpStatus.OK : HttpStatus.CONFLICT)
        .body(purchase);
  }
}
