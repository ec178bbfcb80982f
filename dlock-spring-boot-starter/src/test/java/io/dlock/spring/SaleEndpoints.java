package io.dlock.spring;

import io.dlock.BackendUnavailableException;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** A locked sale behind HTTP, for the tests of how a lock not acquired is answered. */
final class SaleEndpoints {
  private SaleEndpoints() {}

  /** The locked method: one buyer of a sku at a time, nobody waits. */
  static class Stock {
    @Locked(name = "stock", key = "#sku", waitTime = "0")
    public String buy(String sku) {
      return "sold " + sku;
    }
  }

  @RestController
  static class SaleController {
    private final Stock stock;

    SaleController(Stock stock) {
      this.stock = stock;
    }

    @PostMapping("/sale/{sku}/buy")
    String buy(@PathVariable String sku) {
      return stock.buy(sku);
    }

    /** The lock server does not answer. */
    @PostMapping("/sale/down")
    String down() {
      throw new BackendUnavailableException("redis://lock-server:6379 did not answer");
    }
  }
}
