package io.dlock.idempotency.web;

import io.dlock.testkit.TestTiming;
import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A shop that places orders: every handled POST creates a new order number, so a second execution
 * shows. A body containing {@code slow} holds the request until the test releases it.
 */
@SpringBootApplication
public class OrdersApp {
  static final AtomicInteger ORDERS = new AtomicInteger();
  static volatile CountDownLatch slowEntered = new CountDownLatch(1);
  static volatile CountDownLatch slowRelease = new CountDownLatch(1);

  @RestController
  static class Orders {
    @PostMapping(path = "/orders", produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<String> place(@RequestBody String item) throws InterruptedException {
      int order = ORDERS.incrementAndGet();
      if (item.contains("slow")) {
        slowEntered.countDown();
        if (!slowRelease.await(TestTiming.millis(30_000).toMillis(), TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException("the test never released the slow request");
        }
      }
      return ResponseEntity.created(URI.create("/orders/" + order))
          .header("X-Not-Stored", "order-" + order)
          .body("{\"order\":" + order + ",\"item\":" + item + "}");
    }

    @PostMapping(path = "/unstable", produces = MediaType.TEXT_PLAIN_VALUE)
    ResponseEntity<String> unstable(@RequestBody String body) {
      int order = ORDERS.incrementAndGet();
      // Fails the first time for a body, succeeds after: a 5xx is not stored.
      return body.contains("fail-once") && order % 2 == 1
          ? ResponseEntity.status(503).body("try again")
          : ResponseEntity.ok("done " + order);
    }
  }
}
