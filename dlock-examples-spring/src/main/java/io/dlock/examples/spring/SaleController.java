package io.dlock.examples.spring;

import io.dlock.examples.spring.StockService.Inventory;
import io.dlock.examples.spring.StockService.Purchase;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The sale over HTTP. {@code POST /sale/{sku}/buy?quantity=2}: 200 with the purchase, 409 when the
 * stock is too low, or 400 with the reason when the request is wrong (a quantity out of range, an
 * unknown sku). {@code /buy-unlocked} does the same without the lock.
 */
@RestController
@RequestMapping("/sale/{sku}")
public class SaleController {
  private static final int MAX_PURCHASE = 1000;
  private static final int MAX_STOCK = 1_000_000;

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
    if (quantity < 0 || quantity > MAX_STOCK) {
      throw new IllegalArgumentException(
          "quantity must be from 0 to " + MAX_STOCK + ", but was " + quantity);
    }
    return stock.restock(sku, quantity);
  }

  /**
   * A request this controller refuses: 400 with the reason as an RFC 9457 problem, rather than the
   * 500 (reason only in the log) that an unhandled exception gets.
   */
  @ExceptionHandler(IllegalArgumentException.class)
  public ProblemDetail badRequest(IllegalArgumentException e) {
    return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
  }

  private static int checked(int quantity) {
    if (quantity < 1 || quantity > MAX_PURCHASE) {
      throw new IllegalArgumentException(
          "quantity must be from 1 to " + MAX_PURCHASE + ", but was " + quantity);
    }
    return quantity;
  }

  private static ResponseEntity<Purchase> answer(Purchase purchase) {
    return ResponseEntity.status(purchase.sold() ? HttpStatus.OK : HttpStatus.CONFLICT)
        .body(purchase);
  }
}
